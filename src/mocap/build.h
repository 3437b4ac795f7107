/* Internal helpers of the character builder (character.c), shared with the rules (rules.c) and
 * the joint ranges (ranges.c). */
#ifndef FB_MOCAP_BUILD_H
#define FB_MOCAP_BUILD_H

#include <stdbool.h>

#include "featherbone/mocap.h"

/* Whether a joint name matches a rules pattern: case-insensitive; '=name' matches the whole
 * name, anything else a substring. (rules.c) */
bool fb_rule_matches(const char* name, const char* pattern);

/* Records a warning on the character (printf-style); only the first FB_CLIP_MAX_WARN are
 * stored, the rest counted. (character.c) */
void fb_character_warn(fb_character* ch, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The joint ranges of a character being built (docs/MOCAP.md, "Joint ranges"), after its bodies
 * are added and before the model is finalized: every ball or hinge joint the rules' ranges
 * match gets its share of the range, measured from anatomical directions of the rest pose and
 * widened where the clip goes past it, as its model limit; ch->range records each, and a
 * warning sums up the widening. end[i]: joint i's segment end (body coordinates, m), as the
 * builder planned it. FB_ENOMEM, or FB_EINVAL from fb_model_set_limit. (ranges.c) */
fb_status fb_ranges_apply(const fb_clip* c, const fb_rules* r, fb_character* ch,
                          const fb_v3* end, fb_error* err);

#endif /* FB_MOCAP_BUILD_H */
