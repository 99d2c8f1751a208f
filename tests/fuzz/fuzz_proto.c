/*  fuzz_proto — libFuzzer target for the wire decoder: any bytes, cut
 *  into frames, must be decoded or refused, never crash, leak or read out
 *  of bounds; a decoded STATS or REPORT goes on through proto_stats_decode,
 *  and a BATCH is split by proto_unbatch and each part decoded.
 *
 *  Input: byte 0 says how many frames (1 + its value % 8); then each frame
 *  but the last is a 2-byte little-endian length and that many bytes; the
 *  last frame is whatever is left. Seeds in tests/fuzz/corpus/proto.
 */
#include <stddef.h>
#include <stdint.h>

#include "overlay/proto.h"
#include "overlay/proto_stats.h"
#include "overlay/util.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int frames = 1 + data[0] % 8;
    size_t at = 1;
    zmsg_t *msg = zmsg_new ();
    for (int f = 0; f < frames; f++) {
        size_t len = size - at;
        if (f + 1 < frames) {
            if (size - at < 2)
                break;
            len = (size_t) data[at] | (size_t) data[at + 1] << 8;
            at += 2;
            if (len > size - at)
                len = size - at;
        }
        zmsg_addmem (msg, data + at, len);
        at += len;
    }
    proto_msg_t m;
    char err[TF_ERRLEN];
    zmsg_t *parts[PROTO_MAX_BATCH];
    int n = proto_unbatch (&msg, parts, err, sizeof err);
    for (int i = 0; i < n; i++)
        if (proto_decode (&parts[i], &m, err, sizeof err) == 0)
            proto_msg_clear (&m);
    if (n != 0)
        return 0;
    if (proto_decode (&msg, &m, err, sizeof err) == 0) {
        if (m.command == PROTO_STATS || m.command == PROTO_REPORT) {
            proto_stats_t s;
            if (proto_stats_decode (m.object, m.payload, m.command == PROTO_REPORT, 8, &s,
                                    err, sizeof err) == 0) {
                zmsg_t *again = proto_stats_encode (m.command, &s);
                zmsg_destroy (&again);
            }
            proto_stats_clear (&s);
        }
        proto_msg_clear (&m);
    }
    return 0;
}
