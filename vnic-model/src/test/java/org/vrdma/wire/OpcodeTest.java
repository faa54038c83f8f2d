package org.vrdma.wire;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class OpcodeTest {

    @Test
    void knowsTheRcUcUdOpcodesAndCnpOnly() {
        assertThat(RoceFrames.VALID_OPCODES).hasSize(23 + 12 + 2 + 1);
        assertThat(Opcode.isValid(0x15)).as("reserved RC opcode").isFalse();
        assertThat(Opcode.isValid(0x40)).as("RD is not supported").isFalse();
        assertThat(Opcode.isValid(-1)).isFalse();
        assertThat(Opcode.isValid(0x104)).isFalse();
        assertThat(Opcode.extensionHeaderBytes(0x104)).isZero();
    }

    @Test
    void extensionHeadersFollowTheSpecTable() {
        assertThat(Opcode.extensionHeaderBytes(Opcode.RC_SEND_MIDDLE)).isZero();
        assertThat(Opcode.hasReth(Opcode.RC_RDMA_WRITE_FIRST)).isTrue();
        assertThat(Opcode.hasReth(Opcode.RC_RDMA_WRITE_MIDDLE)).isFalse();
        assertThat(Opcode.extensionHeaderBytes(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE))
                .isEqualTo(16 + 4);
        assertThat(Opcode.extensionHeaderBytes(Opcode.UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE))
                .isEqualTo(16 + 4);
        assertThat(Opcode.hasReth(Opcode.RC_RDMA_READ_REQUEST)).isTrue();
        assertThat(Opcode.hasPayload(Opcode.RC_RDMA_READ_REQUEST)).isFalse();
        assertThat(Opcode.hasAeth(Opcode.RC_RDMA_READ_RESPONSE_FIRST)).isTrue();
        assertThat(Opcode.hasAeth(Opcode.RC_RDMA_READ_RESPONSE_MIDDLE)).isFalse();
        assertThat(Opcode.hasAeth(Opcode.RC_RDMA_READ_RESPONSE_LAST)).isTrue();
        assertThat(Opcode.hasAeth(Opcode.RC_RDMA_READ_RESPONSE_ONLY)).isTrue();
        assertThat(Opcode.extensionHeaderBytes(Opcode.RC_ACKNOWLEDGE)).isEqualTo(4);
        assertThat(Opcode.extensionHeaderBytes(Opcode.RC_ATOMIC_ACKNOWLEDGE)).isEqualTo(4 + 8);
        assertThat(Opcode.hasAtomicAckEth(Opcode.RC_ATOMIC_ACKNOWLEDGE)).isTrue();
        assertThat(Opcode.extensionHeaderBytes(Opcode.RC_COMPARE_SWAP)).isEqualTo(28);
        assertThat(Opcode.hasAtomicEth(Opcode.RC_FETCH_ADD)).isTrue();
        assertThat(Opcode.hasIeth(Opcode.RC_SEND_ONLY_WITH_INVALIDATE)).isTrue();
        assertThat(Opcode.hasIeth(Opcode.RC_SEND_LAST_WITH_INVALIDATE)).isTrue();
        assertThat(Opcode.hasImmDt(Opcode.UC_SEND_LAST_WITH_IMMEDIATE)).isTrue();
        assertThat(Opcode.hasDeth(Opcode.UD_SEND_ONLY)).isTrue();
        assertThat(Opcode.extensionHeaderBytes(Opcode.UD_SEND_ONLY_WITH_IMMEDIATE))
                .isEqualTo(8 + 4);
        assertThat(Opcode.hasDeth(Opcode.RC_SEND_ONLY)).isFalse();
        assertThat(Opcode.isCnp(Opcode.CNP)).isTrue();
        assertThat(Opcode.extensionHeaderBytes(Opcode.CNP)).isEqualTo(16);
        assertThat(Opcode.hasPayload(Opcode.CNP)).isFalse();
        for (int op : RoceFrames.VALID_OPCODES) {
            boolean ucOrUd = (op & 0xE0) == 0x20 || (op & 0xE0) == 0x60;
            if (ucOrUd) {
                assertThat(Opcode.hasAeth(op)).as(Opcode.name(op)).isFalse();
            }
            assertThat(Opcode.hasDeth(op)).as(Opcode.name(op)).isEqualTo((op & 0xE0) == 0x60);
        }
    }

    @Test
    void namesAreTheOnesWiresharkShows() {
        assertThat(Opcode.name(Opcode.RC_SEND_FIRST)).isEqualTo("RC Send First");
        assertThat(Opcode.name(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE)).isEqualTo("RC RDMA Write Only Immediate");
        assertThat(Opcode.name(Opcode.RC_ATOMIC_ACKNOWLEDGE)).isEqualTo("RC Atomic Acknowledge");
        assertThat(Opcode.name(Opcode.RC_SEND_ONLY_WITH_INVALIDATE)).isEqualTo("RC Send Only Invalidate");
        assertThat(Opcode.name(Opcode.UC_SEND_ONLY)).isEqualTo("UC Send Only");
        assertThat(Opcode.name(Opcode.UD_SEND_ONLY_WITH_IMMEDIATE)).isEqualTo("UD Send Only Immediate");
        assertThat(Opcode.name(Opcode.CNP)).isEqualTo("CNP");
        assertThat(Opcode.name(0x15)).isEqualTo("Unknown (0x15)");
    }
}
