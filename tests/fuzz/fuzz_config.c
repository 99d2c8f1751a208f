/*  fuzz_config — libFuzzer target for the experiment loader: any text must
 *  load or be refused with a message, never crash, leak or hang; a config
 *  that loads goes on through the emulation check and back to JSON, which
 *  must load again. Seeds in tests/fuzz/corpus/config.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/config.h"
#include "overlay/util.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *text = malloc (size + 1);
    if (!text)
        return 0;
    memcpy (text, data, size);
    text[size] = '\0';
    char err[TF_ERRLEN];
    config_t *cfg = config_load_string (text, "fuzz.json", err, sizeof err);
    free (text);
    if (!cfg)
        return 0;
    config_check_emulation (cfg, err, sizeof err);
    char *again = config_to_json (cfg);
    config_t *twice = again ? config_load_string (again, "fuzz.json", err, sizeof err) : NULL;
    if (!twice)
        abort ();   /* what the loader wrote it must read back */
    config_destroy (&twice);
    free (again);
    config_destroy (&cfg);
    return 0;
}
