package org.vrdma.vnic.verbs;

import static org.vrdma.vnic.verbs.QpAttrMask.ACCESS_FLAGS;
import static org.vrdma.vnic.verbs.QpAttrMask.ALT_PATH;
import static org.vrdma.vnic.verbs.QpAttrMask.AV;
import static org.vrdma.vnic.verbs.QpAttrMask.CUR_STATE;
import static org.vrdma.vnic.verbs.QpAttrMask.DEST_QPN;
import static org.vrdma.vnic.verbs.QpAttrMask.EN_SQD_ASYNC_NOTIFY;
import static org.vrdma.vnic.verbs.QpAttrMask.MAX_DEST_RD_ATOMIC;
import static org.vrdma.vnic.verbs.QpAttrMask.MAX_QP_RD_ATOMIC;
import static org.vrdma.vnic.verbs.QpAttrMask.MIN_RNR_TIMER;
import static org.vrdma.vnic.verbs.QpAttrMask.PATH_MIG_STATE;
import static org.vrdma.vnic.verbs.QpAttrMask.PATH_MTU;
import static org.vrdma.vnic.verbs.QpAttrMask.PKEY_INDEX;
import static org.vrdma.vnic.verbs.QpAttrMask.PORT;
import static org.vrdma.vnic.verbs.QpAttrMask.QKEY;
import static org.vrdma.vnic.verbs.QpAttrMask.RETRY_CNT;
import static org.vrdma.vnic.verbs.QpAttrMask.RNR_RETRY;
import static org.vrdma.vnic.verbs.QpAttrMask.RQ_PSN;
import static org.vrdma.vnic.verbs.QpAttrMask.SQ_PSN;
import static org.vrdma.vnic.verbs.QpAttrMask.STATE;
import static org.vrdma.vnic.verbs.QpAttrMask.TIMEOUT;

/**
 * Which QP state transitions exist and which attributes each requires and allows, per transport
 * type: the table of IBA 11.2.4.2 as libibverbs and the kernel ({@code ib_modify_qp_is_ok}) apply it.
 */
final class QpTransitions {
    private QpTransitions() {}

    /**
     * Checks a modify call.
     *
     * @return null if valid, otherwise why not
     */
    static String check(final QpType type, final QpState cur, final QpState next, final int mask) {
        if ((mask & CUR_STATE) != 0
                && cur != QpState.RTR
                && cur != QpState.RTS
                && cur != QpState.SQD
                && cur != QpState.SQE) {
            return "CUR_STATE is only allowed from RTR, RTS, SQD or SQE";
        }
        final long masks = masks(type, cur, next);
        if (masks < 0) {
            return "no transition " + cur + " -> " + next + " for " + type;
        }
        final int req = (int) (masks >>> 32);
        final int opt = (int) masks;
        if ((mask & req) != req) {
            return cur + " -> " + next + " requires attributes 0x" + Integer.toHexString(req & ~mask);
        }
        final int extra = mask & ~(req | opt | STATE);
        if (extra != 0) {
            return cur + " -> " + next + " does not allow attributes 0x" + Integer.toHexString(extra);
        }
        return null;
    }

    /** {@code required << 32 | optional}, or -1 if the transition does not exist. */
    private static long masks(final QpType type, final QpState cur, final QpState next) {
        if (next == QpState.RESET || next == QpState.ERR) {
            return 0;
        }
        return switch (type) {
            case RC -> rcMasks(cur, next);
            case UC -> ucMasks(cur, next);
            case UD -> udMasks(cur, next);
        };
    }

    private static long rcMasks(final QpState cur, final QpState next) {
        return switch (cur) {
            case RESET -> next == QpState.INIT ? req(PKEY_INDEX | PORT | ACCESS_FLAGS) : -1;
            case INIT ->
                switch (next) {
                    case INIT -> opt(PKEY_INDEX | PORT | ACCESS_FLAGS);
                    case RTR ->
                        both(
                                AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER,
                                ALT_PATH | ACCESS_FLAGS | PKEY_INDEX);
                    default -> -1;
                };
            case RTR ->
                next == QpState.RTS
                        ? both(
                                TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC,
                                CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE)
                        : -1;
            case RTS ->
                switch (next) {
                    case RTS -> opt(CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE | MIN_RNR_TIMER);
                    case SQD -> opt(EN_SQD_ASYNC_NOTIFY);
                    default -> -1;
                };
            case SQD ->
                switch (next) {
                    case RTS -> opt(CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE);
                    case SQD ->
                        opt(PORT
                                | AV
                                | TIMEOUT
                                | RETRY_CNT
                                | RNR_RETRY
                                | MAX_QP_RD_ATOMIC
                                | MAX_DEST_RD_ATOMIC
                                | ALT_PATH
                                | ACCESS_FLAGS
                                | PKEY_INDEX
                                | MIN_RNR_TIMER
                                | PATH_MIG_STATE);
                    default -> -1;
                };
            default -> -1;
        };
    }

    /** UC: connected like RC, without the attributes of ACKs, retries and reads. */
    private static long ucMasks(final QpState cur, final QpState next) {
        return switch (cur) {
            case RESET -> next == QpState.INIT ? req(PKEY_INDEX | PORT | ACCESS_FLAGS) : -1;
            case INIT ->
                switch (next) {
                    case INIT -> opt(PKEY_INDEX | PORT | ACCESS_FLAGS);
                    case RTR -> both(AV | PATH_MTU | DEST_QPN | RQ_PSN, ALT_PATH | ACCESS_FLAGS | PKEY_INDEX);
                    default -> -1;
                };
            case RTR -> next == QpState.RTS ? both(SQ_PSN, CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE) : -1;
            case RTS ->
                switch (next) {
                    case RTS -> opt(CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE);
                    case SQD -> opt(EN_SQD_ASYNC_NOTIFY);
                    default -> -1;
                };
            case SQD ->
                switch (next) {
                    case RTS -> opt(CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE);
                    case SQD -> opt(PORT | AV | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | PATH_MIG_STATE);
                    default -> -1;
                };
            case SQE -> next == QpState.RTS ? opt(CUR_STATE | ACCESS_FLAGS) : -1;
            default -> -1;
        };
    }

    private static long udMasks(final QpState cur, final QpState next) {
        return switch (cur) {
            case RESET -> next == QpState.INIT ? req(PKEY_INDEX | PORT | QKEY) : -1;
            case INIT ->
                switch (next) {
                    case INIT -> opt(PKEY_INDEX | PORT | QKEY);
                    case RTR -> opt(PKEY_INDEX | QKEY);
                    default -> -1;
                };
            case RTR -> next == QpState.RTS ? both(SQ_PSN, CUR_STATE | QKEY) : -1;
            case RTS ->
                switch (next) {
                    case RTS -> opt(CUR_STATE | QKEY);
                    case SQD -> opt(EN_SQD_ASYNC_NOTIFY);
                    default -> -1;
                };
            case SQD ->
                switch (next) {
                    case RTS -> opt(CUR_STATE | QKEY);
                    case SQD -> opt(PKEY_INDEX | QKEY);
                    default -> -1;
                };
            case SQE -> next == QpState.RTS ? opt(CUR_STATE | QKEY) : -1;
            default -> -1;
        };
    }

    private static long req(final int required) {
        return (long) required << 32;
    }

    private static long opt(final int optional) {
        return optional & 0xFFFFFFFFL;
    }

    private static long both(final int required, final int optional) {
        return req(required) | opt(optional);
    }
}
