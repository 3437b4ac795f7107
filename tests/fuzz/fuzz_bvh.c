/* libFuzzer target: BVH text -> clip -> character -> motion, the whole import path that
 * untrusted files reach. Built and run by tests/fuzz/run.sh (clang, ASan + UBSan). */
#include <stddef.h>
#include <stdint.h>

#include "featherbone/featherbone.h"

/* Inputs past this size only slow the search down without reaching new code. */
#define FUZZ_MAX_INPUT 65536
/* Frames turned into motion per input: enough to exercise resampling. */
#define FUZZ_MAX_FRAMES 64

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > FUZZ_MAX_INPUT) {
        return 0;
    }
    fb_error err;
    fb_clip* c = fb_clip_parse_bvh((const char*)data, size, "fuzz.bvh", NULL, NULL, &err);
    if (!c) {
        return 0;
    }
    fb_character* ch = fb_character_build(c, NULL, &err);
    if (ch) {
        const int last = c->nframe < FUZZ_MAX_FRAMES ? c->nframe : FUZZ_MAX_FRAMES;
        fb_motion* mo = fb_motion_from_clip(c, ch, 0.0, 0, last, &err);
        fb_motion_destroy(mo);
        mo = fb_motion_from_clip(c, ch, 97.0, 0, last, &err);
        fb_motion_destroy(mo);
        fb_character_destroy(ch);
    }
    fb_clip_destroy(c);
    return 0;
}
