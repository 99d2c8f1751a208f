/*  proto_batch — BATCH, a loop turn's small messages to the parent as one
 *  message, and its splitting back into them before each is decoded. See
 *  proto.h (proto_batch, proto_unbatch). */
#include "overlay/proto.h"

#include "overlay/util.h"

zmsg_t *
proto_batch (zmsg_t **msgs, uint32_t n)
{
    json_t *body = json_object ();
    json_object_set_new (body, "n", json_integer (n));
    zmsg_t *batch = proto_encode (PROTO_BATCH, &body, NULL);
    for (uint32_t i = 0; i < n; i++) {
        zframe_t *f;
        while ((f = zmsg_pop (msgs[i])))
            zmsg_append (batch, &f);
        zmsg_destroy (&msgs[i]);
    }
    return batch;
}

/*  Is frame a header of a command a BATCH may carry? */
static int
batchable (zframe_t *frame)
{
    const byte *h = zframe_data (frame);
    return zframe_size (frame) == 2 && h[0] == PROTO_VERSION
        && (h[1] == PROTO_REQUEST || h[1] == PROTO_ACK || h[1] == PROTO_DONE
            || h[1] == PROTO_RETURN);
}

/*  The BATCH's own header and body, popped: its count of parts, checked
 *  against its frames. Returns the count, or -1 with a message in err. */
static int
batch_count (zmsg_t *msg, char *err, size_t errlen)
{
    size_t frames = zmsg_size (msg);
    zmsg_t *own = zmsg_new ();
    zframe_t *f = zmsg_pop (msg);
    zmsg_append (own, &f);
    f = zmsg_pop (msg);
    if (f)
        zmsg_append (own, &f);
    json_t *n = NULL;
    int count = -1;
    zframe_t *body = zmsg_last (own);
    if (zmsg_size (own) == 2 && zframe_size (body) <= 64) {
        n = json_loadb ((const char *) zframe_data (body), zframe_size (body),
                        JSON_REJECT_DUPLICATES, NULL);
        json_t *v = json_object_get (n, "n");
        if (json_is_object (n) && json_object_size (n) == 1 && json_is_integer (v)
            && json_integer_value (v) >= 2 && json_integer_value (v) <= PROTO_MAX_BATCH
            && (size_t) json_integer_value (v) * 2 + 2 == frames)
            count = (int) json_integer_value (v);
    }
    json_decref (n);
    zmsg_destroy (&own);
    if (count < 0)
        tf_error (err, errlen, "BATCH: body must be {\"n\": N}, 2 <= N <= %d, with "
                  "N messages of two frames each after it", PROTO_MAX_BATCH);
    return count;
}

int
proto_unbatch (zmsg_t **msg_p, zmsg_t **parts, char *err, size_t errlen)
{
    zmsg_t *msg = *msg_p;
    zframe_t *head = zmsg_first (msg);
    if (!head || zframe_size (head) != 2 || zframe_data (head)[0] != PROTO_VERSION
        || zframe_data (head)[1] != PROTO_BATCH)
        return 0;
    *msg_p = NULL;
    int n = batch_count (msg, err, errlen);
    for (int i = 0; i < n; i++) {
        zframe_t *h = zmsg_pop (msg), *b = zmsg_pop (msg);
        if (!batchable (h)) {
            tf_error (err, errlen, "BATCH: part %d is not a REQUEST, ACK or DONE", i);
            zframe_destroy (&h);
            zframe_destroy (&b);
            while (i-- > 0)
                zmsg_destroy (&parts[i]);
            n = -1;
            break;
        }
        parts[i] = zmsg_new ();
        zmsg_append (parts[i], &h);
        zmsg_append (parts[i], &b);
    }
    zmsg_destroy (&msg);
    return n;
}
