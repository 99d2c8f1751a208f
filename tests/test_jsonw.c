/*  test_jsonw — the strict JSON walker: each message style (config,
 *  tasks, wire), the key check with its suggestion and lists, and every
 *  getter's type and range checks. No files: documents are strings.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "overlay/jsonw.h"
#include "overlay/util.h"

typedef struct {
    jsonw_doc_t doc;
    jsonw_t w;
    json_t *json;
    char err[TF_ERRLEN];
} fixture_t;

/*  Open text as the top object of a document of style. */
static void
open_doc (fixture_t *f, jsonw_style_t style, const char *origin, const char *text)
{
    memset (f, 0, sizeof *f);
    f->json = json_loads (text, 0, NULL);
    assert_non_null (f->json);
    f->doc = (jsonw_doc_t) {.style = style, .origin = origin, .err = f->err,
                            .errlen = sizeof f->err};
    jsonw_init (&f->w, &f->doc, f->json);
}

static void
close_doc (fixture_t *f)
{
    json_decref (f->json);
}

static const char *const keys[] = {"count", "input_mb", "units", NULL};

/*  The three forms of a message about the same field. */
static void
test_each_style_formats_its_messages (void **state)
{
    (void) state;
    fixture_t f;
    open_doc (&f, JSONW_CONFIG, "x.json", "{}");
    assert_int_equal (jsonw_fail (&f.doc, "tasks.count", "bad %d", 1), -1);
    assert_string_equal (f.err, "x.json: tasks.count: bad 1");
    jsonw_fail (&f.doc, NULL, "bad");
    assert_string_equal (f.err, "x.json: bad");
    jsonw_fail_syntax (&f.doc, 3, 7, "end of file");
    assert_string_equal (f.err, "x.json:3:7: end of file");
    close_doc (&f);

    open_doc (&f, JSONW_TASKS, "t.jsonl", "{}");
    f.doc.line = 4;
    jsonw_fail (&f.doc, "argv", "bad");
    assert_string_equal (f.err, "t.jsonl:4: field 'argv': bad");
    jsonw_fail (&f.doc, NULL, "bad");
    assert_string_equal (f.err, "t.jsonl:4: bad");
    f.doc.line = 0;
    jsonw_fail (&f.doc, NULL, "bad");
    assert_string_equal (f.err, "t.jsonl: bad");
    f.doc.origin = NULL;
    jsonw_fail (&f.doc, NULL, "bad");
    assert_string_equal (f.err, "bad");
    close_doc (&f);

    open_doc (&f, JSONW_PROTO, "HELLO", "{}");
    jsonw_fail (&f.doc, "ignored", "bad");
    assert_string_equal (f.err, "HELLO: bad");
    close_doc (&f);
}

/*  An unknown key is named: config suggests the closest or lists the
 *  allowed, tasks lists them with "or", the wire says it is unexpected. */
static void
test_unknown_keys_are_named (void **state)
{
    (void) state;
    fixture_t f;
    open_doc (&f, JSONW_CONFIG, "x.json", "{\"cuont\": 1}");
    assert_int_equal (jsonw_check_keys (&f.w, keys), -1);
    assert_string_equal (f.err, "x.json: unknown key \"cuont\" (did you mean \"count\"?)");
    close_doc (&f);
    open_doc (&f, JSONW_CONFIG, "x.json", "{\"colour\": 1}");
    assert_int_equal (jsonw_check_keys (&f.w, keys), -1);
    assert_string_equal (f.err, "x.json: unknown key \"colour\" (expected one of: count, "
                         "input_mb, units)");
    close_doc (&f);
    open_doc (&f, JSONW_TASKS, "t", "{\"it's\": 1}");
    f.doc.line = 2;
    assert_int_equal (jsonw_check_keys (&f.w, keys), -1);
    assert_string_equal (f.err, "t:2: field 'it\\'s': unknown field (expected count, "
                         "input_mb or units)");
    close_doc (&f);
    open_doc (&f, JSONW_PROTO, "ACK", "{\"count\": 1, \"more\": 2}");
    assert_int_equal (jsonw_check_keys (&f.w, keys), -1);
    assert_string_equal (f.err, "ACK: unexpected field \"more\"");
    close_doc (&f);
    open_doc (&f, JSONW_PROTO, "ACK", "{\"count\": 1, \"units\": 2}");
    assert_int_equal (jsonw_check_keys (&f.w, keys), 0);
    close_doc (&f);
}

/*  Numbers: type, finiteness and each rule; absent optional keys are
 *  left alone, absent required ones refused. */
static void
test_numbers_obey_their_rules (void **state)
{
    (void) state;
    fixture_t f;
    double v = 42;
    open_doc (&f, JSONW_CONFIG, "x", "{\"a\": 0, \"b\": 1.5, \"s\": \"1\", \"n\": -1}");
    assert_int_equal (jsonw_get_number (&f.w, "none", 0, JSONW_ANY, &v), 0);
    assert_true (v == 42);
    assert_int_equal (jsonw_get_number (&f.w, "none", 1, JSONW_ANY, &v), -1);
    assert_string_equal (f.err, "x: missing required key \"none\"");
    assert_int_equal (jsonw_get_number (&f.w, "b", 1, JSONW_FRACTION, &v), -1);
    assert_string_equal (f.err, "x: b: must be in (0, 1], got 1.5");
    assert_int_equal (jsonw_get_number (&f.w, "a", 1, JSONW_POSITIVE, &v), -1);
    assert_string_equal (f.err, "x: a: must be > 0, got 0");
    assert_int_equal (jsonw_get_number (&f.w, "n", 1, JSONW_NONNEGATIVE, &v), -1);
    assert_string_equal (f.err, "x: n: must be >= 0, got -1");
    assert_int_equal (jsonw_get_number (&f.w, "s", 1, JSONW_ANY, &v), -1);
    assert_string_equal (f.err, "x: s: expected a number, got string");
    assert_int_equal (jsonw_get_number (&f.w, "a", 1, JSONW_NONNEGATIVE, &v), 1);
    assert_true (v == 0);
    close_doc (&f);
    open_doc (&f, JSONW_PROTO, "MEASURE", "{\"n\": -1}");
    assert_int_equal (jsonw_get_number (&f.w, "n", 1, JSONW_NONNEGATIVE, &v), -1);
    assert_string_equal (f.err, "MEASURE: field \"n\" must be a finite number >= 0");
    assert_int_equal (jsonw_get_number (&f.w, "gone", 1, JSONW_ANY, &v), -1);
    assert_string_equal (f.err, "MEASURE: field \"gone\" must be a finite number");
    close_doc (&f);
}

/*  Integers: a real is none, and the range is stated. */
static void
test_integers_are_integers_in_range (void **state)
{
    (void) state;
    fixture_t f;
    long long v = 0;
    open_doc (&f, JSONW_CONFIG, "x", "{\"r\": 3.0, \"big\": 11, \"ok\": 10}");
    assert_int_equal (jsonw_get_integer (&f.w, "r", 1, 1, LLONG_MAX, &v), -1);
    assert_string_equal (f.err, "x: r: expected a positive integer, got real");
    assert_int_equal (jsonw_get_integer (&f.w, "big", 1, 1, 10, &v), -1);
    assert_string_equal (f.err, "x: big: expected an integer in 1..10, got 11");
    assert_int_equal (jsonw_get_integer (&f.w, "ok", 1, 1, 10, &v), 1);
    assert_int_equal (v, 10);
    close_doc (&f);
    open_doc (&f, JSONW_PROTO, "ACK", "{\"index\": -1}");
    assert_int_equal (jsonw_get_integer (&f.w, "index", 1, 0, 7, &v), -1);
    assert_string_equal (f.err, "ACK: field \"index\" must be an integer in [0, 7]");
    close_doc (&f);
}

/*  Strings, booleans, sections, and array values with their limits. */
static void
test_strings_bools_sections_and_arrays (void **state)
{
    (void) state;
    fixture_t f;
    const char *s = NULL;
    int b = -1;
    open_doc (&f, JSONW_TASKS, "t", "{\"e\": \"\", \"l\": \"abcd\", \"n\": 1, \"a\": [1, 2]}");
    f.doc.line = 1;
    assert_int_equal (jsonw_get_string (&f.w, "e", 1, 1, 10, &s), -1);
    assert_string_equal (f.err, "t:1: field 'e': must not be empty");
    assert_int_equal (jsonw_get_string (&f.w, "l", 1, 1, 3, &s), -1);
    assert_string_equal (f.err, "t:1: field 'l': is 4 bytes long, more than the limit of 3");
    assert_int_equal (jsonw_get_string (&f.w, "n", 1, 0, 3, &s), -1);
    assert_string_equal (f.err, "t:1: field 'n': expected a string, got a number");
    assert_int_equal (jsonw_get_string (&f.w, "l", 1, 1, 4, &s), 1);
    assert_string_equal (s, "abcd");
    size_t n = 0;
    json_t *a = json_object_get (f.json, "a");
    assert_int_equal (jsonw_array_of (&f.doc, "a", a, 0, 1, &n), -1);
    assert_string_equal (f.err, "t:1: field 'a': has 2 elements, more than the limit of 1");
    assert_int_equal (jsonw_array_of (&f.doc, "a", a, 3, 4, &n), -1);
    assert_string_equal (f.err, "t:1: field 'a': must not be empty");
    assert_int_equal (jsonw_array_of (&f.doc, "n", json_object_get (f.json, "n"), 0, 4,
                                      &n), -1);
    assert_string_equal (f.err, "t:1: field 'n': expected an array, got a number");
    assert_int_equal (jsonw_array_of (&f.doc, "a", a, 2, 2, &n), 0);
    assert_int_equal (n, 2);
    close_doc (&f);

    open_doc (&f, JSONW_CONFIG, "x", "{\"p\": {\"q\": 1}, \"t\": true, \"z\": 0}");
    jsonw_t sub;
    assert_int_equal (jsonw_get_section (&f.w, "p", 1, &sub), 1);
    assert_string_equal (sub.label, "p");
    assert_int_equal (jsonw_get_string (&sub, "q", 1, 1, SIZE_MAX, &s), -1);
    assert_string_equal (f.err, "x: p.q: expected a string, got integer");
    assert_int_equal (jsonw_get_section (&f.w, "t", 1, &sub), -1);
    assert_string_equal (f.err, "x: t: expected an object, got boolean");
    assert_int_equal (jsonw_get_bool (&f.w, "t", 1, &b), 1);
    assert_int_equal (b, 1);
    assert_int_equal (jsonw_get_bool (&f.w, "z", 1, &b), -1);
    assert_string_equal (f.err, "x: z: expected true or false, got integer");
    close_doc (&f);
    open_doc (&f, JSONW_PROTO, "CONFIG: run", "{\"z\": 0}");
    assert_int_equal (jsonw_get_bool (&f.w, "z", 1, &b), -1);
    assert_string_equal (f.err, "CONFIG: run: field \"z\" must be true or false");
    assert_int_equal (jsonw_get_string (&f.w, "z", 1, 0, SIZE_MAX, &s), -1);
    assert_string_equal (f.err, "CONFIG: run: field \"z\" must be a string");
    close_doc (&f);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_each_style_formats_its_messages),
        cmocka_unit_test (test_unknown_keys_are_named),
        cmocka_unit_test (test_numbers_obey_their_rules),
        cmocka_unit_test (test_integers_are_integers_in_range),
        cmocka_unit_test (test_strings_bools_sections_and_arrays),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
