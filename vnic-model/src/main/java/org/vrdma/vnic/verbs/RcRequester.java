package org.vrdma.vnic.verbs;

import io.netty.buffer.ByteBuf;
import org.vrdma.runtime.TimerService;
import org.vrdma.vnic.transport.Aeth;
import org.vrdma.vnic.transport.Opcodes;
import org.vrdma.vnic.transport.Psn;
import org.vrdma.vnic.transport.PsnBitmap;
import org.vrdma.vnic.transport.RateWindowSource;
import org.vrdma.vnic.transport.RecoveryMode;
import org.vrdma.vnic.transport.RnrTimer;
import org.vrdma.vnic.transport.RtoEstimator;
import org.vrdma.vnic.transport.TransportCounters;
import org.vrdma.vnic.transport.TransportPacket;
import org.vrdma.vnic.transport.TxWindow;

/**
 * The requester half of an RC queue pair: segments send work requests into packets, keeps them
 * within the TX window, processes ACKs, NAKs and responses, retransmits (go-back-N or selective) and
 * completes work requests in order.
 *
 * <p>PSN state: {@code sndUna} is the oldest PSN not yet confirmed, {@code sndMax} the next PSN never
 * sent, {@code ackedPsn} the highest PSN the responder acknowledged cumulatively (it may run ahead
 * of an RDMA READ whose responses are missing). A cursor ({@code curSeq}, {@code curPkt}, {@code
 * curPsn}) walks the send queue; below {@code sndMax} it replays (go-back-N), at {@code sndMax} it
 * sends new packets. Payload is gathered from memory again on every (re)transmission, as hardware
 * does, so nothing is buffered per packet.
 */
final class RcRequester {
    /** Headers and trailer around one packet's payload on the wire (Ethernet to ICRC, at most). */
    private static final int PACKET_OVERHEAD_BYTES = 80;

    private final QueuePair qp;
    private final Device device;
    private final SendQueue sq;
    private final TransportCounters counters;
    private final TxWindow window;
    private final RtoEstimator rto;
    private final RecoveryMode mode;
    /** Send times a requester tracks before its first growth. */
    private static final int INITIAL_SENT_TRACK = 64;

    private final PsnBitmap sacked;
    /**
     * Time of the last transmission of each tracked PSN (a READ request's at its first PSN), at
     * index {@code (psn - sentBasePsn) & trackMask}: made at the first transmission (a QP that never
     * sends, a flow's responder, does not carry it) and grown as PSNs further from the first are
     * sent, so a short flow's QP holds a few hundred bytes instead of the whole window's.
     * Entries never written read as 0.
     */
    private long[] lastSentNs;
    /**
     * Time of the first transmission of each tracked PSN, indexed as {@link #lastSentNs}; null until
     * the first resend (until then every packet's first transmission is its last), so a flow that
     * never resends carries one array of send times, not two.
     */
    private long[] firstSentNs;

    private int sentBasePsn;
    /**
     * Send time of the newest packet sent only once that an answer showed delivered. The path keeps
     * order, so an answer for a packet resent since its first transmission, arriving after this
     * passed that first transmission, cannot be the first copy's (which arrived earlier and was
     * answered earlier, if at all).
     */
    private long deliveredFrontierNs = Long.MIN_VALUE;
    /** The stamp of the last transmission (see {@link #emit}). */
    private long sendStampNs = Long.MIN_VALUE / 2;

    private final int trackMask;
    private final TimerService timers;

    private int pmtu;
    private int maxRdAtomic;
    private int retryCnt;
    private int rnrRetry;

    private int sndUna;
    private int sndMax;
    private int ackedPsn;
    private long assignedEnd;
    private long curSeq;
    private int curPkt;
    private int curPsn;

    private int sackedCount;
    private boolean inRecovery;
    private int recoveryPoint;
    private int srCursor;
    private int srLimit;
    private int srSinglePsn = -1;
    /**
     * A second walk over holes already resent: below {@code rewalkEndPsn}, only packets last sent
     * before {@code rewalkBeforeNs} (the send time of a packet that has since been SACKed) go again.
     */
    private boolean rewalking;

    private int rewalkEndPsn;
    private long rewalkBeforeNs;

    private int outstandingRdAtomic;
    /**
     * The IB local ACK timeout (4.096 µs · 2^timeout): retransmission timeouts count against
     * {@code retry_cnt} only once this long passed without forward progress; {@link Long#MAX_VALUE}
     * for timeout 0 (infinite).
     */
    private long ackTimeoutNs;
    /** When the current ACK-timeout period began: the last forward progress, first send or counted retry. */
    private long ackTimerStartNs;

    private int retryLeft;
    private int rnrRetryLeft;

    private boolean rtoArmed;
    /** When the current retransmission period began: first send, forward progress or a timeout. */
    private long rtoStartNs;

    private long rtoDeadlineNs;
    /** A tail-loss probe may still go in the current period. */
    private boolean probeDue;
    /** When the last ACK, NAK or response arrived: a path that answers needs no probe. */
    private long lastAnswerNs;

    private long rtoTimerId = TimerService.NO_TIMER;
    private long rtoTimerAtNs;
    /** Go-back-N: a tail-loss probe resent the oldest packet at {@code gbnProbeNs}. */
    private boolean gbnProbePending;

    private long gbnProbeNs;
    /**
     * A tail-loss probe went and no RTT sample came since: the next probe waits for one. A probe
     * that goes because the round trip grew (a queue building up) resends the sampled packet, so by
     * Karn's rule its ACK gives no sample; probing again at the old round trip kept every later
     * sample from being taken and resent each packet of a window-limited flow. (Go-back-N under heavy
     * loss, whose first transmissions were never acknowledged before being replayed, waited for good
     * and fell back on the backed-off RTO; its replays after a NAK now give samples.) The wait also
     * ends once everything outstanding at the probe is acknowledged: the probe was answered, and the
     * packets sent since are a new tail: the next WRITE's only packet, lost too, waited for the RTO
     * (the probe's ACK gives no sample, and the lost packet's never comes).
     */
    private boolean probeWaitsForSample;
    /** {@code sndMax} when the last tail-loss probe went: the wait for a sample ends once it is acknowledged. */
    private int probeSndMax;
    /**
     * The RTT sample a resend made ambiguous (Karn): its packet, that packet's first send time and,
     * once acknowledged, the round trip from it (-1 while unknown). If a duplicate ACK then shows
     * the responder got the resent copy too, the first ACK was the original's and the sample holds.
     * Without it a round trip that grows past the probe time (a queue building up) is never learnt:
     * each probe or timeout resends exactly the packets whose samples would have shown it.
     */
    private int resentSamplePsn;

    private long resentSampleSentNs = -1;
    private long resentSampleRttNs = -1;
    /** Smallest RTT sampled (0 before the first): no copy of a packet comes back sooner. */
    private long minRttNs;
    /**
     * Send time of the newest delivered packet that marked the packets sent before it as lost; a
     * delivery only marks more when it was sent later than this.
     */
    private long lossMarkSentNs = Long.MIN_VALUE;

    /**
     * Whether the last timeout may prove spurious (see {@link #onDuplicateAck}): a timeout that
     * resent one data packet, {@code spuriousCheckPsn}, waits for that resend to leave, then for the
     * ACK covering it, then for a duplicate ACK. The path keeps order, so an ACK covering the packet
     * followed by the responder's duplicate ACK for the resent copy shows the original had arrived:
     * the timeout was a delay spike (DSACK's evidence, from RC's duplicate ACK). Any other resend
     * before the covering ACK ends the check, since its duplicate would draw the same ACK; the
     * next ACK that acknowledges more ends it too (the duplicate ACK would have come before it).
     */
    private int spuriousCheck = SPURIOUS_NONE;

    private int spuriousCheckPsn;

    private static final int SPURIOUS_NONE = 0;
    private static final int SPURIOUS_RESEND_PENDING = 1;
    private static final int SPURIOUS_AWAIT_ACK = 2;
    private static final int SPURIOUS_AWAIT_DUP = 3;

    private boolean rnrWait;
    private long rnrTimerId = TimerService.NO_TIMER;
    private long paceTimerId = TimerService.NO_TIMER;
    private long paceTimerAtNs;
    private long ccTimerId = TimerService.NO_TIMER;
    private long ccTimerDeadlineNs;

    private boolean rttSampling;
    private int rttSamplePsn;
    private long rttSampleSentNs;
    private int lastGoBackPsn = -1;
    /** Go-back-N: a NAK's replay is under way, whose copies from this PSN on time the round trip. */
    private boolean replaySampling;

    private int replaySamplesFromPsn;
    private long lastGoBackNs;
    private boolean drainNotified;

    RcRequester(final QueuePair qp, final SendQueue sq, final TxWindow window, final RecoveryMode mode) {
        this.qp = qp;
        this.device = qp.device();
        this.sq = sq;
        this.counters = qp.countersRef();
        this.window = window;
        this.mode = mode;
        this.timers = device.timers();
        final int track = device.config().sackWindowPackets();
        this.sacked = new PsnBitmap(track);
        this.trackMask = sacked.size() - 1;
        this.rto = new RtoEstimator(
                device.config().initialRtoNs(),
                device.config().minRtoNs(),
                device.config().infiniteTimeoutCeilingNs());
    }

    /** Entering RTS from RTR: start sending at {@code sqPsn}. */
    void init(final QpAttr attr) {
        pmtu = attr.pathMtu.bytes();
        window.mtuBytes(pmtu);
        updateAttributes(attr);
        sndUna = attr.sqPsn;
        sndMax = attr.sqPsn;
        curPsn = attr.sqPsn;
        ackedPsn = Psn.prev(attr.sqPsn);
        assignedEnd = sq.head;
        curSeq = sq.head;
        curPkt = 0;
        sacked.clearAll();
        sackedCount = 0;
        inRecovery = false;
        rewalking = false;
        probeWaitsForSample = false;
        resentSampleSentNs = -1;
        lossMarkSentNs = Long.MIN_VALUE;
        deliveredFrontierNs = Long.MIN_VALUE;
        srSinglePsn = -1;
        spuriousCheck = SPURIOUS_NONE;
        outstandingRdAtomic = 0;
        rttSampling = false;
        replaySampling = false;
        retryLeft = retryCnt;
        rnrRetryLeft = rnrRetry;
    }

    /** Attributes that RTS→RTS or SQD→SQD may change. */
    void updateAttributes(final QpAttr attr) {
        maxRdAtomic = Math.max(1, attr.maxRdAtomic);
        retryCnt = attr.retryCnt;
        rnrRetry = attr.rnrRetry;
        retryLeft = retryCnt;
        rnrRetryLeft = rnrRetry;
        ackTimeoutNs = attr.timeout == 0 ? Long.MAX_VALUE : RtoEstimator.ceilingForTimeoutCode(attr.timeout, 0);
        final long ceiling =
                RtoEstimator.ceilingForTimeoutCode(attr.timeout, device.config().infiniteTimeoutCeilingNs());
        rto.reset(
                Math.min(device.config().initialRtoNs(), ceiling),
                Math.min(device.config().minRtoNs(), ceiling),
                ceiling);
    }

    int pmtu() {
        return pmtu;
    }

    RtoEstimator rto() {
        return rto;
    }

    /** Stops all timers (QP leaves RTS/SQD for ERR or RESET). */
    void stop() {
        timers.cancel(rtoTimerId);
        timers.cancel(rnrTimerId);
        timers.cancel(paceTimerId);
        timers.cancel(ccTimerId);
        rtoTimerId = TimerService.NO_TIMER;
        rnrTimerId = TimerService.NO_TIMER;
        paceTimerId = TimerService.NO_TIMER;
        ccTimerId = TimerService.NO_TIMER;
        rtoArmed = false;
        gbnProbePending = false;
        rnrWait = false;
    }

    /** True once nothing is outstanding and no WQE is half sent. */
    boolean isDrained() {
        return sndUna == sndMax && curSeq == assignedEnd;
    }

    void onEnterSqd() {
        drainNotified = false;
        checkDrained();
    }

    @Override
    public String toString() {
        return "RcRequester{sndUna=" + sndUna + ", sndMax=" + sndMax + ", ackedPsn=" + ackedPsn + ", cur=" + curSeq
                + "/" + curPkt + "@" + curPsn + ", head=" + sq.head + ", assignedEnd=" + assignedEnd + ", tail="
                + sq.tail + ", sacked=" + sackedCount + ", recovery=" + inRecovery + " [" + srCursor + "," + srLimit
                + ") single=" + srSinglePsn + ", rto=" + rtoArmed + "@" + rtoDeadlineNs + ", timer=" + rtoTimerId
                + ", rnrWait=" + rnrWait + ", window=" + window.windowPackets() + '}';
    }

    // ---------------------------------------------------------------- transmit

    /** Sends whatever the window, pacer and state allow. */
    void progress(final long nowNs) {
        while (qp.isRequesterActive() && !rnrWait) {
            if (srSinglePsn != -1) {
                if (paced(nowNs)) {
                    return;
                }
                final int p = srSinglePsn;
                srSinglePsn = -1;
                retransmitOne(p, nowNs);
                continue;
            }
            if (inRecovery && Psn.lt(srCursor, srLimit)) {
                if (paced(nowNs)) {
                    return;
                }
                if (emitSelective(nowNs)) {
                    continue;
                }
            }
            if (Psn.lt(curPsn, sndMax)) {
                // A go-back-N replay counts what it resent against the window, so a timeout or NAK
                // replays at most a window per round trip, at the pacer's rate.
                if (mode == RecoveryMode.GO_BACK_N && !window.allows(Psn.diff(curPsn, sndUna), 1)) {
                    return;
                }
                if (paced(nowNs)) {
                    return;
                }
                emitAtCursor(nowNs);
                continue;
            }
            skipLocalOps();
            if (curSeq == sq.tail) {
                return;
            }
            final SendWqe w = sq.get(curSeq);
            if (curSeq == assignedEnd) {
                if (qp.state() == QpState.SQD) {
                    return;
                }
                if (w.localError != null) {
                    checkLocalError();
                    return;
                }
                if (w.opcode.isReadOrAtomic() && outstandingRdAtomic >= maxRdAtomic) {
                    return;
                }
                if ((w.sendFlags & SendFlags.FENCE) != 0 && outstandingRdAtomic > 0) {
                    return;
                }
                if (w.opcode.isLocal()) {
                    // A memory window operation executes when the send queue reaches it (after a
                    // fence, once earlier READs and atomics completed); it takes no PSN and
                    // completes once everything before it has (retire).
                    w.localError = qp.executeLocal(w);
                    if (w.localError != null) {
                        checkLocalError();
                        return;
                    }
                    w.firstPsn = curPsn;
                    w.responseDone = true;
                    assignedEnd++;
                    curSeq++;
                    curPkt = 0;
                    retire(nowNs);
                    continue;
                }
                if (!windowAllows(packetsAtCursor(w)) || paced(nowNs)) {
                    return;
                }
                w.firstPsn = curPsn;
                w.readNextPsn = curPsn;
                w.responseDone = false;
                w.reRequestedPsn = -1;
                assignedEnd++;
                if (w.opcode.isReadOrAtomic()) {
                    outstandingRdAtomic++;
                }
            } else if (!windowAllows(packetsAtCursor(w)) || paced(nowNs)) {
                return;
            }
            emitAtCursor(nowNs);
        }
    }

    /** Moves the cursor over executed memory window operations: a replay has nothing to send for them. */
    private void skipLocalOps() {
        while (curSeq < assignedEnd && sq.get(curSeq).numPackets == 0) {
            curSeq++;
        }
    }

    /** Packets the next new transmission of {@code w} at the cursor puts in flight. */
    private int packetsAtCursor(final SendWqe w) {
        return w.opcode == WrOpcode.RDMA_READ ? readRequestPackets(w, curPkt) : 1;
    }

    /**
     * Response packets one new READ request asks for, from packet {@code pkt} of {@code w}: a quarter
     * of the TX window. Responses are not acknowledged, so the window is the only thing that keeps a
     * large READ from arriving as one burst (1 MiB is 256 packets of 4 KiB) that overflows the
     * requester's socket buffer; a READ therefore goes out as several requests, each for the next
     * part of the remote buffer (PSN, VA and length advanced), like the requests that recover a READ
     * from its first missing response. Several requests in flight keep the responses flowing.
     */
    private int readRequestPackets(final SendWqe w, final int pkt) {
        final int remaining = w.numPackets - pkt;
        final int windowPackets = window.windowPackets();
        final int chunk = Math.max(1, Math.min(windowPackets / 4, trackMask / 2));
        return Math.min(remaining, chunk);
    }

    private boolean windowAllows(final int packets) {
        final int outstanding = Psn.diff(sndMax, sndUna);
        if (outstanding + packets > trackMask) {
            return outstanding == 0;
        }
        return window.allows(outstanding - sackedCount, packets);
    }

    private boolean paced(final long nowNs) {
        final long t = window.earliestDepartureNs(nowNs);
        if (t <= nowNs) {
            return false;
        }
        if (paceTimerId != TimerService.NO_TIMER && paceTimerAtNs > t) {
            // The rate went up since the timer was set: go at the new time.
            timers.cancel(paceTimerId);
            paceTimerId = TimerService.NO_TIMER;
        }
        if (paceTimerId == TimerService.NO_TIMER) {
            paceTimerAtNs = t;
            paceTimerId = timers.scheduleAt(t, qp);
        }
        return true;
    }

    /** Emits the packet at the cursor and advances it. */
    private void emitAtCursor(final long nowNs) {
        skipLocalOps();
        final SendWqe w = sq.get(curSeq);
        final boolean retx = Psn.lt(curPsn, sndMax);
        switch (w.opcode) {
            case RDMA_READ -> {
                // A new request asks for the next part; a replay asks again for what was asked before.
                final int end = retx
                        ? Psn.min(w.lastPsn(), Psn.prev(sndMax))
                        : Psn.add(curPsn, readRequestPackets(w, curPkt) - 1);
                if (!w.responseDone) {
                    final int start = Psn.lt(curPsn, w.readNextPsn) ? w.readNextPsn : curPsn;
                    if (Psn.le(start, end)) {
                        sendReadRequest(w, start, end, nowNs, retx);
                    }
                }
                curPsn = Psn.next(end);
                curPkt = Psn.diff(curPsn, w.firstPsn);
                if (curPkt == w.numPackets) {
                    curSeq++;
                    curPkt = 0;
                }
            }
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD -> {
                if (!w.responseDone) {
                    sendAtomic(w, nowNs, retx);
                }
                curPsn = Psn.next(curPsn);
                curSeq++;
                curPkt = 0;
            }
            default -> {
                final int psn = curPsn;
                if (!retx || (Psn.gt(psn, ackedPsn) && !(mode == RecoveryMode.SELECTIVE_REPEAT && sacked.get(psn)))) {
                    sendData(w, curPkt, psn, nowNs, retx);
                }
                curPsn = Psn.next(curPsn);
                if (++curPkt == w.numPackets) {
                    curSeq++;
                    curPkt = 0;
                }
            }
        }
        if (Psn.gt(curPsn, sndMax)) {
            sndMax = curPsn;
        }
    }

    /** Selective repeat: retransmits the next missing PSN in {@code [srCursor, srLimit)}. */
    private boolean emitSelective(final long nowNs) {
        while (Psn.lt(srCursor, srLimit)) {
            if (Psn.lt(srCursor, sndUna)) {
                srCursor = sndUna;
                continue;
            }
            if (Psn.ge(srCursor, sndMax)) {
                srCursor = srLimit;
                break;
            }
            if (sacked.get(srCursor)) {
                srCursor = Psn.next(srCursor);
                continue;
            }
            if (rewalking) {
                if (Psn.ge(srCursor, rewalkEndPsn)) {
                    rewalking = false;
                } else if (sentNs(srCursor) >= rewalkBeforeNs) {
                    srCursor = Psn.next(srCursor); // left after the SACKed packet: may still arrive
                    continue;
                }
            }
            final long seq = findWqe(srCursor);
            if (seq < 0) {
                srCursor = srLimit;
                break;
            }
            final SendWqe w = sq.get(seq);
            if (w.opcode.isReadOrAtomic()) {
                final int end = Psn.next(w.lastPsn());
                if (!w.responseDone) {
                    retransmitOne(srCursor, nowNs);
                    srCursor = end;
                    return true;
                }
                srCursor = end;
                continue;
            }
            if (Psn.le(srCursor, ackedPsn)) {
                srCursor = Psn.next(ackedPsn);
                continue;
            }
            final int psn = srCursor;
            srCursor = Psn.next(srCursor);
            sendData(w, Psn.diff(psn, w.firstPsn), psn, nowNs, true);
            return true;
        }
        return false;
    }

    /** Retransmits the one packet (or READ remainder) at {@code psn}, if it is still needed. */
    private void retransmitOne(final int psn, final long nowNs) {
        if (Psn.lt(psn, sndUna) || Psn.ge(psn, sndMax)) {
            return;
        }
        final long seq = findWqe(psn);
        if (seq < 0) {
            return;
        }
        final SendWqe w = sq.get(seq);
        if (w.opcode == WrOpcode.RDMA_READ) {
            final int start = Psn.lt(psn, w.readNextPsn) ? w.readNextPsn : psn;
            final int end = Psn.min(w.lastPsn(), Psn.prev(sndMax));
            if (!w.responseDone && Psn.le(start, end)) {
                sendReadRequest(w, start, end, nowNs, true);
            }
        } else if (w.opcode.isAtomic()) {
            if (!w.responseDone) {
                sendAtomic(w, nowNs, true);
            }
        } else if (Psn.gt(psn, ackedPsn) && !sacked.get(psn)) {
            sendData(w, Psn.diff(psn, w.firstPsn), psn, nowNs, true);
        }
    }

    private void sendData(final SendWqe w, final int pktIdx, final int psn, final long nowNs, final boolean retx) {
        qp.flushRequestedAck();
        final TransportPacket p = device.txPacket();
        qp.fillRcHeaders(p);
        final int n = w.numPackets;
        final long off = (long) pktIdx * pmtu;
        final int len = (int) Math.min(pmtu, w.totalLength - off);
        final boolean first = pktIdx == 0;
        final boolean last = pktIdx == n - 1;
        final boolean imm = w.opcode.hasImm();
        if (w.opcode.isWrite()) {
            if (n == 1) {
                p.opcode = imm ? Opcodes.RC_RDMA_WRITE_ONLY_WITH_IMM : Opcodes.RC_RDMA_WRITE_ONLY;
            } else if (first) {
                p.opcode = Opcodes.RC_RDMA_WRITE_FIRST;
            } else if (last) {
                p.opcode = imm ? Opcodes.RC_RDMA_WRITE_LAST_WITH_IMM : Opcodes.RC_RDMA_WRITE_LAST;
            } else {
                p.opcode = Opcodes.RC_RDMA_WRITE_MIDDLE;
            }
            if (first) {
                p.rethVa = w.remoteAddr;
                p.rethRkey = w.rkey;
                p.rethLength = (int) w.totalLength;
            }
        } else {
            if (n == 1) {
                p.opcode = imm ? Opcodes.RC_SEND_ONLY_WITH_IMM : Opcodes.RC_SEND_ONLY;
            } else if (first) {
                p.opcode = Opcodes.RC_SEND_FIRST;
            } else if (last) {
                p.opcode = imm ? Opcodes.RC_SEND_LAST_WITH_IMM : Opcodes.RC_SEND_LAST;
            } else {
                p.opcode = Opcodes.RC_SEND_MIDDLE;
            }
        }
        if (last && w.opcode == WrOpcode.SEND_WITH_INV) {
            p.opcode = n == 1 ? Opcodes.RC_SEND_ONLY_WITH_INV : Opcodes.RC_SEND_LAST_WITH_INV;
            p.iethRkey = w.invalidateRkey;
        }
        if (last) {
            p.immData = w.immData;
            p.solicited = (w.sendFlags & SendFlags.SOLICITED) != 0;
        }
        p.ackReq = last || retx || fillsWindow(psn);
        p.psn = psn;
        // Gathered from memory straight into the frame when it is encoded.
        p.payload(w, off, len);
        final ByteBuf frame;
        try {
            frame = device.encode(p);
        } catch (final VerbsException e) {
            localFault(w, e);
            return;
        }
        emit(device.transmit(frame, counters), psn, nowNs, retx, true);
    }

    /**
     * Whether {@code psn} fills a window smaller than the responder's ACK coalescing: then no
     * further packet leaves until an ACK comes, and the responder would wait for more packets
     * before it ACKs, so this one asks for the ACK. (Congestion control can shrink the window to
     * one packet, as HPCC does in an incast; a window of at least the coalescing count always
     * gets an ACK without asking.) The responder's coalescing is taken to be this device's.
     */
    private boolean fillsWindow(final int psn) {
        final int windowPackets = window.windowPackets();
        if (windowPackets >= device.config().ackCoalescePackets()) {
            return false;
        }
        final int inFlight = Psn.diff(Psn.max(sndMax, Psn.next(psn)), sndUna) - sackedCount;
        return inFlight >= windowPackets;
    }

    /** Asks for the responses {@code startPsn..endPsn} of {@code w}: that part of the remote buffer. */
    private void sendReadRequest(
            final SendWqe w, final int startPsn, final int endPsn, final long nowNs, final boolean retx) {
        qp.flushRequestedAck();
        final TransportPacket p = device.txPacket();
        qp.fillRcHeaders(p);
        final long off = (long) Psn.diff(startPsn, w.firstPsn) * pmtu;
        final long end = Math.min(w.totalLength, (long) (Psn.diff(endPsn, w.firstPsn) + 1) * pmtu);
        p.opcode = Opcodes.RC_RDMA_READ_REQUEST;
        p.rethVa = w.remoteAddr + off;
        p.rethRkey = w.rkey;
        p.rethLength = (int) (end - off);
        p.psn = startPsn;
        p.ackReq = true;
        if (retx) {
            w.reRequestedPsn = startPsn;
        }
        // A first request times the round trip to its first response (Karn: not a repeat), so the
        // RTO learns how long a responder takes even when a QP only reads.
        emit(p, startPsn, nowNs, retx, true);
    }

    private void sendAtomic(final SendWqe w, final long nowNs, final boolean retx) {
        qp.flushRequestedAck();
        final TransportPacket p = device.txPacket();
        qp.fillRcHeaders(p);
        final boolean cas = w.opcode == WrOpcode.ATOMIC_CMP_AND_SWP;
        p.opcode = cas ? Opcodes.RC_COMPARE_SWAP : Opcodes.RC_FETCH_ADD;
        p.atomicVa = w.remoteAddr;
        p.atomicRkey = w.rkey;
        p.atomicSwapOrAdd = cas ? w.swap : w.compareAdd;
        p.atomicCompare = cas ? w.compareAdd : 0;
        p.psn = w.firstPsn;
        p.ackReq = true;
        if (retx) {
            w.reRequestedPsn = w.firstPsn;
        }
        emit(p, w.firstPsn, nowNs, retx, true);
    }

    private void emit(
            final TransportPacket p, final int psn, final long nowNs, final boolean retx, final boolean sampleRtt) {
        emit(device.transmit(p, counters), psn, nowNs, retx, sampleRtt);
    }

    private void emit(final int bytes, final int psn, final long nowNs, final boolean retx, final boolean sampleRtt) {
        window.onSent(nowNs, bytes);
        // Packets that leave in one turn are stamped a nanosecond apart, so send times order them as
        // they left (which ones were sent before a delivered copy) also within a burst.
        sendStampNs = Math.max(nowNs, sendStampNs + 1);
        recordSent(psn, sendStampNs, retx);
        if (retx && (spuriousCheck == SPURIOUS_RESEND_PENDING || spuriousCheck == SPURIOUS_AWAIT_ACK)) {
            // Another copy before the verdict could draw the duplicate ACK itself. (Once the ACK
            // covering the packet is in, later resends are answered after the resent copy is.)
            spuriousCheck = spuriousCheck == SPURIOUS_RESEND_PENDING && psn == spuriousCheckPsn
                    ? SPURIOUS_AWAIT_ACK
                    : SPURIOUS_NONE;
        }
        if (retx && replaySampling && !rttSampling && sampleRtt && Psn.ge(psn, replaySamplesFromPsn)) {
            counters.retransmittedPackets++;
            rttSampling = true;
            rttSamplePsn = psn;
            rttSampleSentNs = nowNs;
        } else if (retx) {
            counters.retransmittedPackets++;
            if (rttSampling && rttSamplePsn == psn) {
                rttSampling = false; // Karn: a resent packet's ACK is ambiguous
                if (resentSampleSentNs < 0
                        || resentSampleRttNs < 0
                        || nowNs - resentSampleSentNs - resentSampleRttNs > rto.rtoNs()) {
                    // Unless an earlier ambiguous sample is acknowledged and waits for the duplicate
                    // ACK that confirms it (due within an RTO): that one is nearer to being learnt.
                    // A one-packet window's next probe went at the very moment that ACK came back,
                    // and taking its slot kept a round trip grown sevenfold from ever being learnt.
                    resentSamplePsn = psn;
                    resentSampleSentNs = rttSampleSentNs;
                    resentSampleRttNs = -1;
                }
            }
        } else if (!rttSampling && sampleRtt) {
            rttSampling = true;
            rttSamplePsn = psn;
            rttSampleSentNs = nowNs;
        }
        if (!rtoArmed) {
            ackTimerStartNs = nowNs;
            adoptPathRtt();
            restartRto(nowNs);
        }
    }

    /** When {@code psn} (tracked) was last sent; 0 if never. */
    private long sentNs(final int psn) {
        if (lastSentNs == null) {
            return 0;
        }
        final int i = (psn - sentBasePsn) & trackMask;
        return i < lastSentNs.length ? lastSentNs[i] : 0;
    }

    /** When {@code psn} (tracked) was first sent; 0 if never. */
    private long firstSentNs(final int psn) {
        if (firstSentNs == null) {
            return sentNs(psn); // nothing resent yet: first and last transmissions are one
        }
        final int i = (psn - sentBasePsn) & trackMask;
        return i < firstSentNs.length ? firstSentNs[i] : 0;
    }

    private void recordSent(final int psn, final long nowNs, final boolean retx) {
        if (lastSentNs == null) {
            sentBasePsn = psn;
            lastSentNs = new long[Math.min(trackMask + 1, INITIAL_SENT_TRACK)];
        }
        final int i = (psn - sentBasePsn) & trackMask;
        if (i >= lastSentNs.length) {
            final int n = Integer.highestOneBit(i) << 1;
            lastSentNs = java.util.Arrays.copyOf(lastSentNs, n);
            if (firstSentNs != null) {
                firstSentNs = java.util.Arrays.copyOf(firstSentNs, n);
            }
        }
        if (retx && firstSentNs == null) {
            // The first resend: the first transmissions so far are the last ones.
            firstSentNs = lastSentNs.clone();
        }
        lastSentNs[i] = nowNs;
        if (firstSentNs != null && !retx) {
            firstSentNs[i] = nowNs;
        }
    }

    /**
     * When the copy of {@code psn} that an answer arriving now acknowledges was sent. For a packet
     * sent once that is its send time (and the delivery frontier moves); for a resent one the answer
     * is ambiguous (Karn), and taking it for the last copy marked every packet sent between the two
     * copies lost: in a queue that holds a round trip of 30 µs, the answers to the first copies of a
     * rewalk arrived 8 µs after it and sent the whole window again, a third of the link's packets
     * duplicates at 10 % loss. It is the last copy's when the first copy cannot be (an answer to a
     * packet sent after the first copy already arrived: the path keeps order), otherwise the copy
     * whose round trip is nearer the smoothed one, and never a copy sent less than half the path's
     * shortest round trip ago.
     */
    private long deliveredCopySentNs(final int psn, final long nowNs) {
        final long last = sentNs(psn);
        final long first = firstSentNs(psn);
        if (first == last || first == 0) {
            deliveredFrontierNs = Math.max(deliveredFrontierNs, last);
            return last;
        }
        if (nowNs - last < minPathRttNs() / 2) {
            return first;
        }
        if (deliveredFrontierNs > first) {
            return last;
        }
        final long srtt = rto.srttNs();
        return Math.abs(nowNs - first - srtt) < Math.abs(nowNs - last - srtt) ? first : last;
    }

    /**
     * Before its own first RTT sample, the QP times out no sooner than the round trips its device
     * measured on other QPs suggest: a connection per flow otherwise starts every flow with the
     * configured initial RTO, which a slow path (a loaded host) exceeds by far.
     */
    private void adoptPathRtt() {
        final RtoEstimator path = device.pathRtt();
        if (!rto.hasSample() && path.hasSample() && path.baseRtoNs() > rto.baseRtoNs()) {
            rto.adopt(path);
        }
    }

    // ---------------------------------------------------------------- receive

    /** An ACK/NAK, READ response or atomic ACK for this requester. */
    void onResponse(final TransportPacket p, final long nowNs) {
        final int op = p.opcode;
        lastAnswerNs = nowNs;
        if (op == Opcodes.RC_ACKNOWLEDGE) {
            counters.rxAcks++;
            onAcknowledge(p, nowNs);
        } else if (op == Opcodes.RC_ATOMIC_ACKNOWLEDGE) {
            counters.rxAcks++;
            onAtomicAck(p, nowNs);
        } else if (Opcodes.isReadResponse(op)) {
            onReadResponse(p, nowNs);
        } else {
            counters.droppedPackets++;
            return;
        }
        progress(nowNs);
    }

    /** A CNP: congestion control reacts. */
    void onCnp(final long nowNs) {
        window.source().onCnp(nowNs);
        syncCcTimer();
    }

    private void onAcknowledge(final TransportPacket p, final long nowNs) {
        final int psn = p.psn;
        final int d = Psn.diff(psn, Psn.prev(sndUna));
        if (d < 0 || d > Psn.diff(sndMax, sndUna)) {
            counters.droppedPackets++; // stale or bogus
            return;
        }
        final int syn = p.aethSyndrome;
        if (Aeth.isAck(syn)) {
            if (d == 0) {
                onDuplicateAck(nowNs);
            }
            onCumulativeAck(psn, nowNs);
            return;
        }
        if (d == 0) {
            counters.droppedPackets++; // a NAK must name an outstanding PSN
            return;
        }
        onCumulativeAck(Psn.prev(psn), nowNs);
        if (!qp.isRequesterActive()) {
            return;
        }
        if (Aeth.isRnrNak(syn)) {
            counters.rnrNaksReceived++;
            onRnrNak(psn, Aeth.value(syn), nowNs);
            return;
        }
        switch (Aeth.value(syn)) {
            case Aeth.NAK_PSN_SEQUENCE_ERROR -> {
                counters.seqNaksReceived++;
                onSeqNak(psn, p.aethMsn, nowNs);
            }
            case Aeth.NAK_INVALID_REQUEST -> {
                counters.invalidRequestNaksReceived++;
                failAt(psn, WcStatus.REM_INV_REQ_ERR);
            }
            case Aeth.NAK_REMOTE_ACCESS_ERROR -> {
                counters.accessNaksReceived++;
                failAt(psn, WcStatus.REM_ACCESS_ERR);
            }
            default -> {
                counters.remoteOpNaksReceived++;
                failAt(psn, WcStatus.REM_OP_ERR);
            }
        }
    }

    private void onSeqNak(final int psn, final int msnField, final long nowNs) {
        spuriousCheck = SPURIOUS_NONE; // a loss, and resends follow
        window.source().onLoss(nowNs, pmtu);
        syncCcTimer();
        if (mode == RecoveryMode.GO_BACK_N) {
            if (psn == lastGoBackPsn && nowNs - lastGoBackNs < Math.max(rto.srttNs(), 1)) {
                return; // a duplicate NAK for a replay already under way
            }
            goBack(psn, nowNs);
            // The responder dropped every packet after the hole it names, and the copies still on
            // their way arrive before the replay: the replay's ACKs are its own, so they time the
            // round trip. Under heavy loss no first transmission ever got an ACK before its packet
            // was replayed, and without samples the RTO's back-off only grew.
            replaySamplesFromPsn = psn;
            replaySampling = true;
            return;
        }
        final int sack = msnField & Psn.MASK;
        final boolean hasSack = Psn.gt(sack, psn) && Psn.lt(sack, sndMax);
        if (hasSack && !sacked.get(sack)) {
            sacked.set(sack);
            sackedCount++;
        }
        final long sackSentNs = hasSack ? deliveredCopySentNs(sack, nowNs) : 0;
        if (!inRecovery) {
            inRecovery = true;
            recoveryPoint = sndMax;
            srCursor = psn;
            srLimit = psn;
            // Only what left before the SACKed copy is known to be lost (the path keeps order): a
            // resend of the episode before, still on its way, is not sent again.
            rewalking = hasSack && outstandingRdAtomic == 0;
            rewalkEndPsn = psn;
            rewalkBeforeNs = sackSentNs;
        } else if (hasSack && outstandingRdAtomic == 0) {
            // The SACKed packet left after every hole that was sent before it: those are lost.
            resendSentBefore(psn, sackSentNs, nowNs);
        } else if (Psn.lt(psn, srCursor) && resendLost(psn, hasSack ? sack : -1, nowNs)) {
            // The hole was resent this episode and is still reported: the resend was lost too, and
            // so were the resends after it that left before the packet now SACKed (the path keeps
            // order). Walk them again; a resent message whose first packet was lost is dropped whole.
            rewalkEndPsn = rewalking ? Psn.max(rewalkEndPsn, srCursor) : srCursor;
            rewalking = true;
            rewalkBeforeNs = hasSack ? sackSentNs : nowNs - lostRetransmitThresholdNs();
            srCursor = psn;
        }
        srCursor = Psn.max(srCursor, psn);
        final int limit = hasSack ? Psn.next(sack) : unplaceableEnd(psn);
        if (rewalking && hasSack && outstandingRdAtomic == 0) {
            // Every packet sent before the copy now SACKed is lost, up to it.
            rewalkEndPsn = Psn.max(rewalkEndPsn, limit);
            rewalkBeforeNs = Math.max(rewalkBeforeNs, sackSentNs);
        }
        srLimit = Psn.max(srLimit, limit);
    }

    /**
     * A NAK without a SACK: a packet arrived beyond the hole at {@code psn} that the responder could
     * not place, and it drops such packets until the hole is filled. Those are the rest of the hole's
     * message (its first packet, which names the target, may be the hole) and the SENDs, READs,
     * atomics and WRITEs with immediate after it, which only take effect in order; a plain WRITE
     * after them is placed and SACKed if it arrived. Returns the end of that run: resending up to
     * {@code sndMax} instead resent every packet still on its way, a window per NAK.
     */
    private int unplaceableEnd(final int psn) {
        long seq = findWqe(psn);
        if (seq < 0) {
            return sndMax;
        }
        int end = Psn.next(sq.get(seq).lastPsn());
        for (seq++; seq < assignedEnd; seq++) {
            final SendWqe w = sq.get(seq);
            if (w.opcode.isWrite() && !w.opcode.hasImm()) {
                break;
            }
            end = Psn.next(w.lastPsn());
        }
        return Psn.min(end, sndMax);
    }

    /**
     * Whether the last resend of hole {@code psn}, still reported missing, was lost too: a packet
     * sent after it ({@code sackPsn}, -1 for none) arrived, and a round trip passed since it left.
     * The NAKs of one burst, all for packets sent before the resend, keep naming the hole while the
     * resend is on its way; counting them as losses resent each hole several times.
     */
    private boolean resendLost(final int psn, final int sackPsn, final long nowNs) {
        final long resentNs = sentNs(psn);
        if (nowNs - resentNs < rto.srttNs()) {
            return false;
        }
        if (sackPsn != -1) {
            return sentNs(sackPsn) > resentNs;
        }
        return nowNs - resentNs > lostRetransmitThresholdNs();
    }

    /**
     * Selective repeat: packet {@code deliveredSentNs} was sent at arrived (SACKed or acknowledged),
     * so every packet from {@code fromPsn} on that is still missing and left before it is lost, as
     * the path keeps order: resend those (and only those; later ones may still arrive). A NAK names
     * only the first hole, so holes above it whose resends were lost too were otherwise found one
     * per round trip, or one per probe when no NAK came at all. Only while no READ or atomic is
     * outstanding: a READ's send time is kept at the PSN its request went with, not at each
     * response's, and its responses are asked for again when a later one arrives.
     */
    private void resendSentBefore(final int fromPsn, final long deliveredSentNs, final long nowNs) {
        if (deliveredSentNs <= lossMarkSentNs || nowNs - deliveredSentNs < minPathRttNs() / 2) {
            // Nothing new; or the answer came too soon to be for that copy, so it was for an
            // earlier one that says nothing about the packets sent in between.
            return;
        }
        if (!inRecovery || Psn.ge(srCursor, srLimit)) {
            if (!inRecovery) {
                inRecovery = true;
                recoveryPoint = sndMax;
            }
            rewalkEndPsn = sndMax;
            srLimit = sndMax;
        } else if (Psn.lt(fromPsn, srCursor)) {
            rewalkEndPsn = rewalking ? Psn.max(rewalkEndPsn, srCursor) : srCursor;
        } else {
            return; // the walk has not got there yet: it resends them
        }
        lossMarkSentNs = deliveredSentNs;
        rewalkBeforeNs = rewalking ? Math.max(rewalkBeforeNs, deliveredSentNs) : deliveredSentNs;
        rewalking = true;
        srCursor = fromPsn;
        window.source().onResend(nowNs);
    }

    /**
     * The shortest round trip a copy can take: the configured base round trip, or the smallest
     * sampled if shorter. (Samples taken while a queue was full, as in an incast, can all be far
     * above it; a guard at half of those missed the probe answers that came back through the empty
     * queue.)
     */
    private long minPathRttNs() {
        final long base = device.config().baseRttNs();
        return minRttNs == 0 ? base : Math.min(base, minRttNs);
    }

    private long lostRetransmitThresholdNs() {
        return rto.hasSample() ? rto.srttNs() + 4 * rto.rttvarNs() : rto.rtoNs();
    }

    private void onRnrNak(final int psn, final int timerCode, final long nowNs) {
        if (rnrRetry != 7) {
            if (rnrRetryLeft == 0) {
                failAt(psn, WcStatus.RNR_RETRY_EXC_ERR);
                return;
            }
            rnrRetryLeft--;
        }
        rnrWait = true;
        rtoArmed = false;
        timers.cancel(rnrTimerId);
        rnrTimerId = timers.scheduleAt(nowNs + RnrTimer.toNanos(timerCode), qp);
        goBack(psn, nowNs);
    }

    private void onReadResponse(final TransportPacket p, final long nowNs) {
        final SendWqe w = firstPendingResponse();
        if (w == null) {
            counters.droppedPackets++;
            return;
        }
        final int psn = p.psn;
        if (w.opcode != WrOpcode.RDMA_READ) {
            if (Psn.gt(psn, w.firstPsn)) {
                requestResponseRetry(w, nowNs);
            }
            counters.droppedPackets++;
            return;
        }
        if (psn != w.readNextPsn) {
            if (Psn.gt(psn, w.readNextPsn)) {
                requestResponseRetry(w, nowNs);
                if (acceptLaterReadResponse(p)) {
                    counters.outOfOrderPlaced++;
                } else {
                    counters.outOfSequence++;
                }
            } else {
                counters.duplicateRequests++;
            }
            return;
        }
        final long off = (long) Psn.diff(psn, w.firstPsn) * pmtu;
        final int expect = (int) Math.min(pmtu, w.totalLength - off);
        if (p.payloadLength() != expect) {
            counters.droppedPackets++;
            return;
        }
        try {
            w.scatter(off, p.payload, p.payloadIndex, expect);
        } catch (final VerbsException e) {
            localFault(w, e);
            return;
        }
        w.readNextPsn = Psn.next(psn);
        if (psn == w.lastPsn()) {
            w.responseDone = true;
        }
        onCumulativeAck(psn, nowNs);
    }

    /**
     * A response beyond the first READ still missing one: if it is the next one a later READ
     * expects, it lands in that READ's buffer and counts as selectively acknowledged, so a lost
     * response costs one request again, not every READ behind it (with 64 one-packet READs in
     * flight, each of those was dropped and asked for again, one per round trip). Completions stay
     * in order; a response inside the same READ beyond its hole is still dropped.
     */
    private boolean acceptLaterReadResponse(final TransportPacket p) {
        final int psn = p.psn;
        final long seq = findWqe(psn);
        if (seq < 0) {
            return false;
        }
        final SendWqe w = sq.get(seq);
        if (w.opcode != WrOpcode.RDMA_READ || w.responseDone || psn != w.readNextPsn) {
            return false;
        }
        final long off = (long) Psn.diff(psn, w.firstPsn) * pmtu;
        final int expect = (int) Math.min(pmtu, w.totalLength - off);
        if (p.payloadLength() != expect) {
            return false;
        }
        try {
            w.scatter(off, p.payload, p.payloadIndex, expect);
        } catch (final VerbsException e) {
            localFault(w, e);
            return true;
        }
        w.readNextPsn = Psn.next(psn);
        if (psn == w.lastPsn()) {
            w.responseDone = true;
        }
        if (!sacked.get(psn)) {
            sacked.set(psn);
            sackedCount++;
        }
        return true;
    }

    private void onAtomicAck(final TransportPacket p, final long nowNs) {
        final SendWqe w = firstPendingResponse();
        if (w == null || !w.opcode.isAtomic() || p.psn != w.firstPsn) {
            if (w != null && Psn.gt(p.psn, w.lastPsn())) {
                requestResponseRetry(w, nowNs);
            }
            counters.duplicateRequests++;
            return;
        }
        try {
            w.mr[0].backing().writeLong(w.offset[0], p.atomicOriginal);
        } catch (final VerbsException e) {
            localFault(w, e);
            return;
        }
        w.responseDone = true;
        onCumulativeAck(p.psn, nowNs);
    }

    private SendWqe firstPendingResponse() {
        for (long s = sq.head; s < assignedEnd; s++) {
            final SendWqe w = sq.get(s);
            if (w.opcode.isReadOrAtomic() && !w.responseDone) {
                return w;
            }
        }
        return null;
    }

    /** The responder moved past a READ/atomic whose response is missing: ask again, once per round. */
    private void requestResponseRetry(final SendWqe w, final long nowNs) {
        final int p = w.opcode == WrOpcode.RDMA_READ ? w.readNextPsn : w.firstPsn;
        if (w.reRequestedPsn == p) {
            return;
        }
        w.reRequestedPsn = p;
        // In both modes only this request goes again: the responder executed the requests after it
        // (their responses are accepted out of order, see acceptLaterReadResponse).
        srSinglePsn = p;
    }

    private void onCumulativeAck(final int a, final long nowNs) {
        if (Psn.gt(a, ackedPsn) && Psn.lt(a, sndMax)) {
            final int newly = Psn.diff(a, ackedPsn);
            ackedPsn = a;
            long rttNs = -1;
            if (rttSampling && Psn.le(rttSamplePsn, a)) {
                rttNs = nowNs - rttSampleSentNs;
                onRttSample(rttNs);
                rttSampling = false;
                resentSampleSentNs = -1;
            } else if (resentSampleSentNs >= 0 && resentSampleRttNs < 0 && Psn.le(resentSamplePsn, a)) {
                resentSampleRttNs = nowNs - resentSampleSentNs;
            }
            window.source().onAck(nowNs, (long) newly * pmtu, rttNs, false);
            syncCcTimer();
            if (spuriousCheck != SPURIOUS_NONE && Psn.ge(a, spuriousCheckPsn)) {
                if (spuriousCheck == SPURIOUS_RESEND_PENDING) {
                    onSpuriousTimeout(nowNs); // acknowledged before the resend even left
                } else if (spuriousCheck == SPURIOUS_AWAIT_ACK) {
                    spuriousCheck = SPURIOUS_AWAIT_DUP;
                } else {
                    spuriousCheck = SPURIOUS_NONE;
                }
            }
        }
        retire(nowNs);
    }

    private void onRttSample(final long rttNs) {
        probeWaitsForSample = false;
        minRttNs = minRttNs == 0 ? rttNs : Math.min(minRttNs, rttNs);
        rto.onRttSample(rttNs);
        device.pathRtt().onRttSample(rttNs);
        device.lateAnswers().onRttSample(rttNs);
    }

    /**
     * An ACK that acknowledges nothing new: the responder got a packet it had (a resent copy). If
     * a resend had made the RTT sample ambiguous and its packet is acknowledged, the first ACK was
     * the original's: the sample holds (the Eifel test, with the duplicate ACK as the evidence).
     */
    private void onDuplicateAck(final long nowNs) {
        if (resentSampleSentNs >= 0 && resentSampleRttNs >= 0) {
            onRttSample(resentSampleRttNs);
            device.lateAnswers().onLateAnswer(resentSampleRttNs);
            resentSampleSentNs = -1;
            resentSampleRttNs = -1;
        }
        if (spuriousCheck == SPURIOUS_AWAIT_DUP) {
            onSpuriousTimeout(nowNs);
        }
    }

    /**
     * The last timeout resent a packet that had arrived: a delay spike outran the RTO. As in the
     * Eifel response (RFC 4015), congestion control undoes its reaction to the timeout. (When the
     * resend had made the RTT sample ambiguous, the duplicate ACK has just confirmed it, which also
     * ends the back-off.)
     */
    private void onSpuriousTimeout(final long nowNs) {
        spuriousCheck = SPURIOUS_NONE;
        counters.spuriousTimeouts++;
        window.source().onSpuriousTimeout(nowNs);
        syncCcTimer();
    }

    /** Completes, in order, every WQE that is fully acknowledged or answered. */
    private void retire(final long nowNs) {
        while (sq.head < assignedEnd) {
            final SendWqe w = sq.get(sq.head);
            if (w.opcode.isReadOrAtomic()) {
                if (!w.responseDone) {
                    if (Psn.gt(ackedPsn, w.lastPsn())) {
                        requestResponseRetry(w, nowNs);
                    }
                    break;
                }
                outstandingRdAtomic--;
            } else if (Psn.lt(ackedPsn, w.lastPsn())) {
                break;
            }
            sq.head++;
            qp.completeSend(w, WcStatus.SUCCESS);
        }
        final int newUna;
        if (sq.head == assignedEnd) {
            newUna = sndMax;
        } else {
            final SendWqe w = sq.get(sq.head);
            if (w.opcode == WrOpcode.RDMA_READ) {
                newUna = w.readNextPsn;
            } else if (w.opcode.isAtomic()) {
                newUna = w.firstPsn;
            } else {
                newUna = Psn.max(w.firstPsn, Psn.next(ackedPsn));
            }
        }
        if (Psn.gt(newUna, sndUna)) {
            advanceUna(newUna, nowNs);
        }
        if (Psn.lt(curPsn, sndUna)) {
            seekCursor(sndUna);
        }
        checkLocalError();
        checkDrained();
    }

    private void advanceUna(final int newUna, final long nowNs) {
        long deliveredSentNs = Long.MIN_VALUE;
        for (int p = sndUna; p != newUna; p = Psn.next(p)) {
            deliveredSentNs = Math.max(deliveredSentNs, deliveredCopySentNs(p, nowNs));
            if (sacked.get(p)) {
                sacked.clear(p);
                sackedCount--;
            }
        }
        sndUna = newUna;
        if (probeWaitsForSample && Psn.ge(sndUna, probeSndMax)) {
            probeWaitsForSample = false;
        }
        retryLeft = retryCnt;
        ackTimerStartNs = nowNs;
        rnrRetryLeft = rnrRetry;
        if (inRecovery && Psn.ge(sndUna, recoveryPoint)) {
            inRecovery = false;
        }
        if (sndUna == sndMax) {
            rtoArmed = false;
            gbnProbePending = false;
        } else if (!rnrWait) {
            restartRto(nowNs);
            if (mode == RecoveryMode.SELECTIVE_REPEAT
                    && inRecovery
                    && sackedCount > 0
                    && outstandingRdAtomic == 0
                    && sentNs(sndUna) < deliveredSentNs
                    && !sacked.get(sndUna)) {
                // The oldest packet left before one now acknowledged (a probe or a resend that
                // arrived): it is lost, and so may be others sent before that one.
                resendSentBefore(sndUna, deliveredSentNs, nowNs);
            }
            if (gbnProbePending && sentNs(sndUna) < gbnProbeNs && nowNs - gbnProbeNs >= rto.srttNs() / 2) {
                // The probe filled the tail's first hole but the responder, accepting only in order,
                // dropped what followed it: replay the rest now rather than probing one per round trip.
                gbnProbePending = false;
                goBack(sndUna, nowNs);
            }
        }
    }

    /**
     * The memory behind a registered region failed (EFAULT: an application unmapped it): the WQE
     * completes with LOC_PROT_ERR, the rest flush and the QP enters ERR, as hardware does on a
     * local protection fault. Other errors are bugs and propagate.
     */
    private void localFault(final SendWqe w, final VerbsException e) {
        if (e.errno() != Errno.EFAULT) {
            throw e;
        }
        counters.localMemoryFaults++;
        for (long s = sq.head; s < sq.tail; s++) {
            if (sq.get(s) == w) {
                qp.failSendQueue(s, WcStatus.LOC_PROT_ERR);
                return;
            }
        }
        qp.failSendQueue(sq.head, WcStatus.LOC_PROT_ERR);
    }

    private void checkLocalError() {
        if (sq.head == assignedEnd && sq.head < sq.tail && curSeq == assignedEnd) {
            final SendWqe w = sq.get(sq.head);
            if (w.localError != null) {
                qp.failSendQueue(sq.head, w.localError);
            }
        }
    }

    private void checkDrained() {
        if (qp.state() == QpState.SQD && !drainNotified && isDrained()) {
            drainNotified = true;
            qp.onSendQueueDrained();
        }
    }

    /** Moves the cursor to {@code psn} (inside an assigned WQE, or {@code sndMax}). */
    private void seekCursor(final int psn) {
        final long seq = findWqe(psn);
        if (seq < 0) {
            curSeq = assignedEnd;
            curPkt = 0;
            curPsn = sndMax;
            // A half-sent WQE continues where it stopped.
            if (assignedEnd > sq.head) {
                final SendWqe w = sq.get(assignedEnd - 1);
                if (Psn.lt(sndMax, Psn.next(w.lastPsn()))) {
                    curSeq = assignedEnd - 1;
                    curPkt = Psn.diff(sndMax, w.firstPsn);
                }
            }
            return;
        }
        final SendWqe w = sq.get(seq);
        curSeq = seq;
        curPkt = Psn.diff(psn, w.firstPsn);
        curPsn = psn;
    }

    /** Sequence number of the assigned WQE whose PSN range holds {@code psn} (and was sent), or -1. */
    private long findWqe(final int psn) {
        if (Psn.ge(psn, sndMax)) {
            return -1;
        }
        for (long s = sq.head; s < assignedEnd; s++) {
            final SendWqe w = sq.get(s);
            if (Psn.inRange(psn, w.firstPsn, w.numPackets)) {
                return s;
            }
        }
        return -1;
    }

    private void goBack(final int psn, final long nowNs) {
        replaySampling = false;
        if (!Psn.lt(psn, sndMax)) {
            return;
        }
        if (Psn.lt(psn, curPsn) || curPsn == sndMax) {
            seekCursor(psn);
        }
        lastGoBackPsn = psn;
        lastGoBackNs = nowNs;
        if (rttSampling && Psn.ge(rttSamplePsn, psn)) {
            rttSampling = false;
        }
    }

    private void failAt(final int psn, final WcStatus status) {
        final long seq = findWqe(psn);
        qp.failSendQueue(seq < 0 ? sq.head : seq, status);
    }

    // ---------------------------------------------------------------- timers
    /**
     * Arms the retransmission timer for a new period starting now (first send, forward progress, a
     * timeout). See {@link #rtoDeadlineNs()}; a tail-loss probe may go earlier.
     */
    private void restartRto(final long nowNs) {
        rtoArmed = true;
        rtoStartNs = nowNs;
        probeDue = !probeWaitsForSample;
        armRtoTimer(nowNs);
    }

    /** Schedules the timer for the earlier of the probe and the RTO, unless it is due sooner. */
    private void armRtoTimer(final long nowNs) {
        rtoDeadlineNs = rtoDeadlineNs();
        final long at = probeDue ? Math.min(probeDeadlineNs(), rtoDeadlineNs) : rtoDeadlineNs;
        if (rtoTimerId != TimerService.NO_TIMER) {
            if (rtoTimerAtNs <= at) {
                return; // fires first and re-arms itself
            }
            timers.cancel(rtoTimerId);
        }
        rtoTimerAtNs = Math.max(at, nowNs);
        rtoTimerId = timers.scheduleAt(rtoTimerAtNs, qp);
    }

    /**
     * When the current period times out: the adaptive RTO, no shorter than an answer the device's
     * QPs were seen to take with nothing lost ({@link Device#lateAnswers()}), plus the ACK gap the
     * pacer makes (see {@link #ackGapNs()}), but no later than the end of the current ACK timeout
     * period, so a retry counts against {@code retry_cnt} when hardware's timer would expire.
     * Computed from the rate in force now, so a rate cut after the timer was armed pushes the
     * deadline out.
     */
    private long rtoDeadlineNs() {
        long deadline = rtoStartNs + Math.max(rto.rtoNs(), device.lateAnswers().allowanceNs()) + ackGapNs();
        if (ackTimeoutNs != Long.MAX_VALUE) {
            deadline = Math.min(deadline, Math.max(rtoStartNs, ackTimerStartNs + ackTimeoutNs));
        }
        return deadline;
    }

    /**
     * When a tail-loss probe goes if nothing progressed: two smoothed round trips, or the RTO
     * before its floor (SRTT + 4 RTTVAR) when the round trip varies more, but no sooner than the
     * configured probe floor (the peer's turn: over real sockets a peer's event loop that loses its
     * core holds its ACK for milliseconds, and a probe per such pause resent one packet in 25-30 of
     * a clean ping-pong) or an answer this path was seen to take (the device's late answers), plus
     * the pacer's ACK gap, after the period began or the last answer arrived (NAKs still coming
     * show a live path and the holes they report). Two round trips alone probed every packet of a
     * flow whose round trip swings with a queue (HPCC's one-packet windows in an incast). Before
     * the first RTT sample there is no probe.
     */
    private long probeDeadlineNs() {
        if (!rto.hasSample()) {
            return Long.MAX_VALUE;
        }
        final long srtt = rto.srttNs();
        final long quietNs = Math.max(
                Math.max(2 * srtt, srtt + 4 * rto.rttvarNs()),
                Math.max(device.config().minProbeNs(), device.lateAnswers().allowanceNs()));
        return Math.max(rtoStartNs, lastAnswerNs) + quietNs + ackGapNs();
    }

    /**
     * How much later than its round trip the ACK of the oldest packet may come on a healthy path:
     * the responder ACKs every {@code ackCoalescePackets} packets (the rest ask for it, see {@link
     * #fillsWindow}), so at a paced rate that ACK waits for the next packets' pacing gaps. At line
     * rate this is nothing; at 200 Mbit/s with 4 KiB packets and an ACK every fourth it is 0.5 ms,
     * beyond a 100 µs RTO floor, and timing out then would resend a window that was never lost.
     */
    private long ackGapNs() {
        final long rate = window.source().rateBps();
        if (rate == RateWindowSource.UNLIMITED_RATE || rate <= 0) {
            return 0;
        }
        final int gaps = Math.min(device.config().ackCoalescePackets(), window.windowPackets()) - 1;
        if (gaps <= 0) {
            return 0;
        }
        return (long) (gaps * (pmtu + PACKET_OVERHEAD_BYTES) * 8e9 / rate);
    }

    private void syncCcTimer() {
        final long t = window.source().nextTimerNs();
        if (t == RateWindowSource.NO_TIMER) {
            return;
        }
        if (ccTimerId == TimerService.NO_TIMER || t < ccTimerDeadlineNs) {
            timers.cancel(ccTimerId);
            ccTimerDeadlineNs = t;
            ccTimerId = timers.scheduleAt(t, qp);
        }
    }

    /** Handles this requester's timers; false if {@code timerId} is not one of them. */
    boolean onTimer(final long nowNs, final long timerId) {
        if (timerId == rtoTimerId) {
            rtoTimerId = TimerService.NO_TIMER;
            onRtoTimer(nowNs);
        } else if (timerId == rnrTimerId) {
            rnrTimerId = TimerService.NO_TIMER;
            rnrWait = false;
            if (sndUna != sndMax) {
                ackTimerStartNs = nowNs;
                restartRto(nowNs);
            }
            progress(nowNs);
        } else if (timerId == paceTimerId) {
            paceTimerId = TimerService.NO_TIMER;
            progress(nowNs);
        } else if (timerId == ccTimerId) {
            ccTimerId = TimerService.NO_TIMER;
            window.source().onTimer(nowNs);
            syncCcTimer();
            progress(nowNs);
        } else {
            return false;
        }
        return true;
    }

    private void onRtoTimer(final long nowNs) {
        if (!rtoArmed || !qp.isRequesterActive()) {
            return;
        }
        if (sndUna == sndMax) {
            rtoArmed = false;
            return;
        }
        rtoDeadlineNs = rtoDeadlineNs();
        if (nowNs < rtoDeadlineNs) {
            if (probeDue && nowNs >= probeDeadlineNs()) {
                probeDue = false;
                sendTailProbe(nowNs);
            }
            armRtoTimer(nowNs);
            return;
        }
        rtoArmed = false;
        counters.timeouts++;
        // The adaptive RTO only resends early; a retry is spent when the ACK timeout expired, as on
        // hardware, so a path slower than the RTO (a descheduled event loop) costs no retries.
        if (nowNs - ackTimerStartNs >= ackTimeoutNs) {
            if (retryLeft == 0) {
                failAt(sndUna, WcStatus.RETRY_EXC_ERR);
                return;
            }
            retryLeft--;
            ackTimerStartNs = nowNs;
        }
        rto.onTimeout();
        window.source().onTimeout(nowNs);
        syncCcTimer();
        // The sample stays unless its packet is resent (Karn, in emit): a resend the pacer still
        // holds when the ACK comes leaves it unambiguous, and it is the sample that shows the round
        // trip grew past the RTO.
        for (long s = sq.head; s < assignedEnd; s++) {
            sq.get(s).reRequestedPsn = -1;
        }
        if (mode == RecoveryMode.GO_BACK_N) {
            // The responder dropped everything after the first loss: replay from the oldest, at the
            // pacer's rate and within the window (see progress).
            goBack(sndUna, nowNs);
        } else {
            // Resend what is known or likely missing, not the whole window: the oldest packet (even
            // if SACKed: when only SACKed packets are left, the ACK that covered them was lost, and
            // a duplicate makes the responder ACK again), the holes below the highest SACKed PSN,
            // and the newest packet as a probe whose SACK reveals the holes above. Each resend that
            // arrives makes progress or brings a SACK; the rest follows from those NAKs and ACKs.
            if (sacked.get(sndUna)) {
                sacked.clear(sndUna);
                sackedCount--;
            }
            int limit = Psn.next(sndUna);
            for (int q = limit; Psn.lt(q, sndMax); q = Psn.next(q)) {
                if (sacked.get(q)) {
                    limit = Psn.next(q);
                }
            }
            inRecovery = true;
            recoveryPoint = sndMax;
            srCursor = sndUna;
            srLimit = limit;
            rewalking = false;
            srSinglePsn = -1;
        }
        spuriousCheck = SPURIOUS_NONE;
        final long oldest = findWqe(sndUna);
        if (Psn.diff(sndMax, sndUna) == 1
                && oldest >= 0
                && !sq.get(oldest).opcode.isReadOrAtomic()) {
            // One data packet goes again: its duplicate ACK, if it comes, tells the timeout was spurious.
            spuriousCheck = SPURIOUS_RESEND_PENDING;
            spuriousCheckPsn = sndUna;
        }
        restartRto(nowNs);
        probeDue = false; // the timeout's own resends probe the tail
        if (mode == RecoveryMode.SELECTIVE_REPEAT) {
            // After the timer is re-armed: a send with the timer idle would start a new ACK-timeout
            // period and spare the next expiry its retry.
            probeTail(srLimit, nowNs);
        }
        progress(nowNs);
    }

    /**
     * A tail-loss probe: nothing progressed for two round trips, which on a healthy path means the
     * last packets (or their ACK, or a READ's last responses) were lost and nothing later will
     * report it. Resends the oldest packet (a READ asks again for its missing responses) and, under
     * selective repeat, the newest, whose SACK reveals any other hole. Unlike a timeout it neither
     * backs off nor tells congestion control, so it may go much sooner than the RTO floor.
     */
    private void sendTailProbe(final long nowNs) {
        counters.tailProbes++;
        probeWaitsForSample = true;
        probeSndMax = sndMax;
        replaySampling = false; // the probe's copy may meet an earlier one still on its way
        window.source().onResend(nowNs);
        for (long s = sq.head; s < assignedEnd; s++) {
            sq.get(s).reRequestedPsn = -1;
        }
        if (sacked.get(sndUna)) {
            sacked.clear(sndUna);
            sackedCount--;
        }
        retransmitOne(sndUna, nowNs);
        if (mode == RecoveryMode.GO_BACK_N) {
            gbnProbePending = true;
            gbnProbeNs = nowNs;
            return;
        }
        probeTail(Psn.next(sndUna), nowNs);
    }

    /**
     * Resends the newest packet beyond {@code fromPsn}, and first the first packet of its WRITE if
     * that is unSACKed too: a WRITE packet whose first packet (the one naming the target) never
     * arrived cannot be placed, so the newest alone would bring no SACK when the whole tail was
     * lost, and each timeout would recover only the oldest packet.
     */
    private void probeTail(final int fromPsn, final long nowNs) {
        final int tail = tailProbePsn(fromPsn);
        if (tail == -1) {
            return;
        }
        final SendWqe w = sq.get(findWqe(tail));
        if (w.opcode.isWrite() && w.firstPsn != tail && Psn.ge(w.firstPsn, fromPsn) && !sacked.get(w.firstPsn)) {
            retransmitOne(w.firstPsn, nowNs);
        }
        retransmitOne(tail, nowNs);
    }

    /**
     * The newest unacknowledged packet to probe with when the range from {@code fromPsn} does not
     * reach it: a SEND or WRITE packet as it is, a READ or atomic from its first PSN (the request
     * resumes where its responses stopped); -1 for none.
     */
    private int tailProbePsn(final int fromPsn) {
        final int tail = Psn.prev(sndMax);
        if (Psn.lt(tail, fromPsn) || sacked.get(tail)) {
            return -1;
        }
        final long seq = findWqe(tail);
        if (seq < 0) {
            return -1;
        }
        final SendWqe w = sq.get(seq);
        if (!w.opcode.isReadOrAtomic()) {
            return tail;
        }
        return Psn.ge(w.firstPsn, fromPsn) ? w.firstPsn : -1;
    }
}
