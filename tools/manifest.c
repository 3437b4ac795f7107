/* Batch manifests: JSON Lines, one simulate job per line, with the keys of the simulate
 * options (docs/BATCH.md). Every line is parsed once, on the reading thread; the jobs are
 * made from the parsed lines later, on the workers, which only read them. */
#define _POSIX_C_SOURCE 200809L /* strdup, fileno */
#include "manifest.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Largest manifest read (bytes): far beyond any real job list, so a wrong path to a disk
 * image fails cleanly. */
#define MANIFEST_MAX_BYTES (1L << 30)
/* Largest integer a JSON number (a double) holds exactly: 2^53. */
#define MANIFEST_MAX_EXACT_INT 9007199254740992.0

/* ---- the keys ------------------------------------------------------------------------- */

/* One key per simulate option, named as the option without its dashes ('-' -> '_'). */
typedef enum key_id {
    K_CLIP,
    K_OUT,
    K_GAINS,
    K_HITS,
    K_HITS_FILE,
    K_RANDOM_HITS,
    K_SEED,
    K_CONTROLLER,
    K_ROOT,
    K_RATE,
    K_FRAMES,
    K_REPORT,
    K_FORMAT,
    K_SELF_COLLISION,
    K_KEEP_PLACEMENT,
    K_RULES,
    K_LOSSLESS,
    K_MASS,
    K_MASS_MODEL,
    K_SCALE,
    K_HEIGHT,
    K_UP,
    K_POS_MODE,
    K_NO_ASSIMP,
    K_FREE_POSITIONS,
    K_SAMPLE,
    K_SAMPLE_SAVE,
    K_SAMPLE_LOAD,
    K_SAMPLE_HIT_SCALE,
    K_ANCHOR,
    K_SAMPLE_PULL,
    K_SAMPLE_STEP,
    K_SAMPLE_ROOT_SCALE,
    K_SAMPLE_HEIGHT_SCALE,
    K_SAMPLE_UPRIGHT,
    K_SAMPLE_HIT,
    K_STRENGTH,
    NKEY
} key_id;

static const char* const KEYS[NKEY] = {"clip",
                                       "out",
                                       "gains",
                                       "hits",
                                       "hits_file",
                                       "random_hits",
                                       "seed",
                                       "controller",
                                       "root",
                                       "rate",
                                       "frames",
                                       "report",
                                       "format",
                                       "self_collision",
                                       "keep_placement",
                                       "rules",
                                       "lossless",
                                       "mass",
                                       "mass_model",
                                       "scale",
                                       "height",
                                       "up",
                                       "pos_mode",
                                       "no_assimp",
                                       "free_positions",
                                       "sample",
                                       "sample_save",
                                       "sample_load",
                                       "sample_hit_scale",
                                       "anchor",
                                       "sample_pull",
                                       "sample_step",
                                       "sample_root_scale",
                                       "sample_height_scale",
                                       "sample_upright",
                                       "sample_hit",
                                       "strength"};

/* What a bad line says: "\"key\": message" into msg. Returns false, for `return fail(...)`. */
static bool fail(char* msg, size_t cap, const char* key, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool fail(char* msg, size_t cap, const char* key, const char* fmt, ...) {
    const int n = snprintf(msg, cap, "\"%s\": ", key);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < cap) {
        vsnprintf(msg + n, cap - (size_t)n, fmt, ap);
    }
    va_end(ap);
    return false;
}

/* Edit distance, case and '-'/'_' ignored, capped at 9. */
static int distance(const char* a, const char* b) {
    const size_t na = strlen(a), nb = strlen(b);
    if (na > 32 || nb > 32) {
        return 9;
    }
    int row[33];
    for (size_t k = 0; k <= nb; k++) {
        row[k] = (int)k;
    }
    for (size_t i = 1; i <= na; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t k = 1; k <= nb; k++) {
            const char ca = a[i - 1] == '-' ? '_' : (char)(a[i - 1] | 0x20);
            const char cb = b[k - 1] == '-' ? '_' : (char)(b[k - 1] | 0x20);
            const int best = row[k] + 1 < row[k - 1] + 1 ? row[k] + 1 : row[k - 1] + 1;
            const int sub = diag + (ca != cb);
            diag = row[k];
            row[k] = best < sub ? best : sub;
        }
    }
    return row[nb] < 9 ? row[nb] : 9;
}

/* "unknown key" with up to three close matches (edit distance <= 2, or one name starting
 * the other), else every key. */
static bool unknown_key(const char* key, char* msg, size_t cap) {
    char near[256] = "";
    int found = 0;
    for (int d = 0; d <= 2 && found < 3; d++) {
        for (int k = 0; k < NKEY && found < 3; k++) {
            const size_t nk = strlen(KEYS[k]), n = strlen(key);
            const bool prefix = n >= 3 && (strncmp(key, KEYS[k], n < nk ? n : nk) == 0);
            const int dk = distance(key, KEYS[k]);
            if ((dk == d && (size_t)d < n) || (d == 2 && prefix && dk > 2)) {
                const size_t used = strlen(near);
                snprintf(near + used, sizeof near - used, "%s\"%s\"", found ? " or " : "", KEYS[k]);
                found++;
            }
        }
    }
    if (found) {
        return fail(msg, cap, key, "unknown key (did you mean %s?)", near);
    }
    char all[512] = "";
    for (int k = 0; k < NKEY; k++) {
        const size_t used = strlen(all);
        snprintf(all + used, sizeof all - used, "%s%s", k ? ", " : "", KEYS[k]);
    }
    return fail(msg, cap, key, "unknown key (expected one of: %s)", all);
}

/* ---- values --------------------------------------------------------------------------- */

/* A path from the manifest: relative ones are relative to the manifest's directory. The job
 * owns the result. */
static const char* path_value(const cJSON* e, const char* key, const char* dir, manifest_job* j,
                              char* msg, size_t cap) {
    if (!cJSON_IsString(e) || e->valuestring[0] == '\0') {
        fail(msg, cap, key, "expected a file name (a non-empty string)");
        return NULL;
    }
    const char* p = e->valuestring;
    const bool join = p[0] != '/' && dir[0] != '\0';
    const size_t n = strlen(dir) + strlen(p) + 2;
    char* s = j->nowned < MANIFEST_MAX_OWNED ? malloc(n) : NULL;
    if (!s) {
        fail(msg, cap, key, "out of memory");
        return NULL;
    }
    snprintf(s, n, "%s%s%s", join ? dir : "", join && strcmp(dir, "/") != 0 ? "/" : "", p);
    j->owned[j->nowned++] = s;
    return s;
}

/* A number in [lo, hi]; `what` says what is expected. */
static bool number_value(const cJSON* e, const char* key, double lo, double hi, const char* what,
                         double* out, char* msg, size_t cap) {
    if (!cJSON_IsNumber(e) || !(e->valuedouble >= lo) || !(e->valuedouble <= hi)) {
        return fail(msg, cap, key, "expected %s", what);
    }
    *out = e->valuedouble;
    return true;
}

/* An integer from lo to hi into *out; `note` follows the range in the message ("" or " (...)"). */
static bool int_value(const cJSON* e, const char* key, int lo, int hi, const char* note, int* out,
                      char* msg, size_t cap) {
    if (!cJSON_IsNumber(e) || !(e->valuedouble >= lo) || !(e->valuedouble <= hi) ||
        e->valuedouble != floor(e->valuedouble)) {
        return fail(msg, cap, key, "expected an integer from %d to %d%s", lo, hi, note);
    }
    *out = (int)e->valuedouble;
    return true;
}

static bool bool_value(const cJSON* e, const char* key, bool* out, char* msg, size_t cap) {
    if (!cJSON_IsBool(e)) {
        return fail(msg, cap, key, "expected true or false");
    }
    *out = cJSON_IsTrue(e);
    return true;
}

/* One of `names` (n of them, listed in the message), as its index. */
static bool choice_value(const cJSON* e, const char* key, const char* const* names, int n, int* out,
                         char* msg, size_t cap) {
    for (int k = 0; cJSON_IsString(e) && k < n; k++) {
        if (strcmp(e->valuestring, names[k]) == 0) {
            *out = k;
            return true;
        }
    }
    char list[256] = "";
    for (int k = 0; k < n; k++) {
        const size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s\"%s\"",
                 k == 0       ? ""
                 : k == n - 1 ? " or "
                              : ", ",
                 names[k]);
    }
    return fail(msg, cap, key, "expected %s", list);
}

/* "A:B" as simulate --frames reads it: 0 <= A < B - 1, B = 0 for the end of the clip. */
static bool frames_value(const cJSON* e, sim_job* job, char* msg, size_t cap) {
    if (!sim_job_parse_frames(cJSON_IsString(e) ? e->valuestring : NULL, job)) {
        return fail(msg, cap, "frames",
                    "expected \"A:B\" with 0 <= A < B - 1 (B = 0 for the end of the clip)");
    }
    return true;
}

/* A non-negative integer as a JSON number (up to 2^53) or a string of digits (any uint64). */
static bool seed_value(const cJSON* e, uint64_t* out, char* msg, size_t cap) {
    if (cJSON_IsNumber(e) && e->valuedouble >= 0.0 && e->valuedouble <= MANIFEST_MAX_EXACT_INT &&
        e->valuedouble == floor(e->valuedouble)) {
        *out = (uint64_t)e->valuedouble;
        return true;
    }
    if (cJSON_IsString(e) && e->valuestring[0] >= '0' && e->valuestring[0] <= '9') {
        char* end = NULL;
        errno = 0;
        const unsigned long long v = strtoull(e->valuestring, &end, 10);
        if (*end == '\0' && errno == 0) {
            *out = (uint64_t)v;
            return true;
        }
    }
    return fail(msg, cap, "seed",
                "expected a non-negative integer (a string of digits above 2^53)");
}

/* ---- hits ----------------------------------------------------------------------------- */

/* A number as the shortest text strtod reads back to the same double. */
static void exact_number(double v, char* buf, size_t cap) {
    snprintf(buf, cap, "%.15g", v);
    if (strtod(buf, NULL) != v) {
        snprintf(buf, cap, "%.17g", v);
    }
}

/* A hit object ({"time": 1.2, "target": "LeftElbow", "from": [0, 0, 1], ...}, the format of a
 * hits file) as the spec string fb_hit_parse reads, so both forms are checked by one parser. */
static bool hit_object_spec(const cJSON* o, int index, char* spec, size_t cap, char* msg,
                            size_t mcap) {
    spec[0] = '\0';
    for (const cJSON* f = o->child; f; f = f->next) {
        char val[128];
        if (strpbrk(f->string, ",=") || (cJSON_IsString(f) && strpbrk(f->valuestring, ",="))) {
            return fail(msg, mcap, "hits",
                        "[%d]: \"%s\": a ',' or '=' cannot be in a key or value",
                        index, f->string);
        }
        if (cJSON_IsNumber(f)) {
            exact_number(f->valuedouble, val, sizeof val);
        } else if (cJSON_IsString(f) && strlen(f->valuestring) < sizeof val) {
            snprintf(val, sizeof val, "%s", f->valuestring);
        } else if (cJSON_IsArray(f) && cJSON_GetArraySize(f) == 3 && cJSON_IsNumber(f->child) &&
                   cJSON_IsNumber(f->child->next) && cJSON_IsNumber(f->child->next->next)) {
            char x[40], y[40], z[40];
            exact_number(f->child->valuedouble, x, sizeof x);
            exact_number(f->child->next->valuedouble, y, sizeof y);
            exact_number(f->child->next->next->valuedouble, z, sizeof z);
            snprintf(val, sizeof val, "%s:%s:%s", x, y, z);
        } else {
            return fail(msg, mcap, "hits", "[%d]: \"%s\": expected a number, a name or [x, y, z]",
                        index, f->string);
        }
        const size_t used = strlen(spec);
        if (snprintf(spec + used, cap - used, "%s%s=%s", used ? "," : "", f->string, val) >=
            (int)(cap - used)) {
            return fail(msg, mcap, "hits", "[%d]: too long", index);
        }
    }
    return true;
}

/* "hits": [ "time=1.2,target=LeftElbow", {"time": 2, "target": "Head"}, ... ] */
static bool hits_value(const cJSON* e, sim_job* job, char* msg, size_t cap) {
    if (!cJSON_IsArray(e)) {
        return fail(msg, cap, "hits",
                    "expected a list of hit specs (\"time=1.2,target=...\") "
                    "or objects ({\"time\": 1.2, \"target\": ...})");
    }
    int index = 0;
    for (const cJSON* h = e->child; h; h = h->next, index++) {
        char spec[1024];
        if (cJSON_IsString(h)) {
            snprintf(spec, sizeof spec, "%s", h->valuestring);
        } else if (!cJSON_IsObject(h)) {
            return fail(msg, cap, "hits", "[%d]: expected a spec string or an object", index);
        } else if (!hit_object_spec(h, index, spec, sizeof spec, msg, cap)) {
            return false;
        }
        if (job->nhit >= FB_SIM_MAX_BALLS) {
            return fail(msg, cap, "hits", "at most %d hits in all", FB_SIM_MAX_BALLS);
        }
        fb_error err;
        if (fb_hit_parse(spec, &job->hit[job->nhit], &err) != FB_OK) {
            return fail(msg, cap, "hits", "[%d]: %s", index, err.msg);
        }
        job->nhit++;
    }
    return true;
}

static bool hits_file_value(const cJSON* e, const char* dir, manifest_job* j, char* msg,
                            size_t cap) {
    const char* path = path_value(e, "hits_file", dir, j, msg, cap);
    if (!path) {
        return false;
    }
    fb_error err;
    int n = 0;
    if (fb_hits_load(path, j->job.hit + j->job.nhit, FB_SIM_MAX_BALLS - j->job.nhit, &n, &err) !=
        FB_OK) {
        return fail(msg, cap, "hits_file", "%s", err.msg);
    }
    j->job.nhit += n;
    j->input[j->ninput++] = path;
    return true;
}

/* ---- one line ------------------------------------------------------------------------- */

static const char* const FORMATS[] = {"bvh", "gltf"};
static const char* const UPS[] = {"y", "z"};
static const char* const POS_MODES[] = {"absolute", "relative"};
static const char* const MASS_MODELS[] = {"density", "anthropometric"};

/* "report": "r.html", or ["r.html", "r.json"]. */
static bool report_value(const cJSON* e, const char* dir, manifest_job* j, char* msg, size_t cap) {
    if (cJSON_IsString(e)) {
        j->job.report[0] = path_value(e, "report", dir, j, msg, cap);
        j->job.nreport = 1;
        return j->job.report[0] != NULL;
    }
    const int n = cJSON_IsArray(e) ? cJSON_GetArraySize(e) : 0;
    if (n < 1 || n > 2) {
        return fail(msg, cap, "report", "expected \"R.html\" or \"R.json\", or a list of both");
    }
    for (const cJSON* r = e->child; r; r = r->next) {
        const char* p = path_value(r, "report", dir, j, msg, cap);
        if (!p) {
            return false;
        }
        j->job.report[j->job.nreport++] = p;
    }
    return true;
}

/* The keys that set a number, a flag or a choice. */
static bool scalar_value(key_id k, const cJSON* e, sim_job* job, char* msg, size_t cap) {
    const char* key = KEYS[k];
    int c = 0;
    bool ok = true;
    switch (k) {
    case K_SAMPLE:
        return int_value(e, key, 0, 100000, " (simulations per window of the search)", &job->sample,
                         msg, cap);
    case K_SAMPLE_HIT_SCALE:
        return number_value(e, key, 0.0, 10.0, "a length in m, 0 to 10", &job->sample_hit_scale,
                            msg, cap);
    case K_SAMPLE_PULL:
        return number_value(e, key, 0.0, 0.9, "a number from 0 to 0.9", &job->sample_pull, msg,
                            cap);
    case K_SAMPLE_STEP:
        return number_value(e, key, 0.0, 1.0, "an angle in rad, 0 to 1", &job->sample_step, msg,
                            cap);
    case K_SAMPLE_ROOT_SCALE:
        return number_value(e, key, 0.001, 10.0, "a length in m, 0.001 to 10",
                            &job->sample_root_scale, msg, cap);
    case K_SAMPLE_HEIGHT_SCALE:
        return number_value(e, key, 0.0, 10.0, "a length in m, 0 to 10", &job->sample_height_scale,
                            msg, cap);
    case K_SAMPLE_UPRIGHT:
        return number_value(e, key, 0.0, 0.99, "a fraction, 0 to 0.99", &job->sample_upright, msg,
                            cap);
    case K_SAMPLE_HIT:
        return int_value(e, key, 1, 100000, " (simulations per window answering a hit)",
                         &job->sample_hit, msg, cap);
    case K_RANDOM_HITS:
        return int_value(e, key, 0, FB_SIM_MAX_BALLS, "", &job->random_hits, msg, cap);
    case K_SEED:
        return seed_value(e, &job->seed, msg, cap);
    case K_RATE:
        ok = number_value(e, key, 30.0, 10000.0, "30 to 10000 (Hz)", &job->rate, msg, cap);
        return ok;
    case K_FRAMES:
        return frames_value(e, job, msg, cap);
    case K_SELF_COLLISION:
        return bool_value(e, key, &job->self_collision, msg, cap);
    case K_KEEP_PLACEMENT:
        return bool_value(e, key, &job->keep_placement, msg, cap);
    case K_LOSSLESS:
        return bool_value(e, key, &job->clip.lossless, msg, cap);
    case K_FREE_POSITIONS:
        return bool_value(e, key, &job->clip.build.free_positions, msg, cap);
    case K_NO_ASSIMP: {
        bool no = false;
        ok = bool_value(e, key, &no, msg, cap);
        job->clip.clip_opts.use_assimp = !no;
        return ok;
    }
    case K_MASS:
    case K_SCALE:
    case K_HEIGHT: {
        double* dst = k == K_MASS    ? &job->clip.build.mass
                      : k == K_SCALE ? &job->clip.clip_opts.scale
                                     : &job->clip.clip_opts.height;
        return number_value(e, key, 1e-300, 1e9, "a positive number", dst, msg, cap);
    }
    case K_CONTROLLER:
        ok = choice_value(e, key, fb_controller_names, FB_NCONTROLLER, &c, msg, cap);
        job->controller = c == 0 ? FB_CTRL_PD : FB_CTRL_ACCEL;
        return ok;
    case K_ROOT:
        ok = choice_value(e, key, fb_root_mode_names, FB_NROOT_MODE, &job->root, msg, cap);
        return ok;
    case K_ANCHOR:
        ok = choice_value(e, key, fb_root_anchor_names, FB_NROOT_ANCHOR, &job->anchor, msg, cap);
        return ok;
    case K_STRENGTH:
        return choice_value(e, key, fb_strength_names, FB_NSTRENGTH, &job->strength, msg, cap);
    case K_FORMAT:
        ok = choice_value(e, key, FORMATS, 2, &c, msg, cap);
        job->gltf = c == 1;
        return ok;
    case K_UP:
        ok = choice_value(e, key, UPS, 2, &c, msg, cap);
        job->clip.clip_opts.up = c == 0 ? FB_UP_Y : FB_UP_Z;
        return ok;
    case K_POS_MODE:
        ok = choice_value(e, key, POS_MODES, 2, &c, msg, cap);
        job->clip.clip_opts.pos_mode = c == 0 ? FB_POS_ABSOLUTE : FB_POS_RELATIVE;
        return ok;
    case K_MASS_MODEL:
        ok = choice_value(e, key, MASS_MODELS, 2, &c, msg, cap);
        job->clip.build.mass_model = c == 0 ? FB_MASS_DENSITY : FB_MASS_ANTHROPOMETRIC;
        return ok;
    default:
        return fail(msg, cap, key, "internal: not a scalar key");
    }
}

/* A file the job reads (path_value into *dst), kept among its inputs for check_outputs. */
static bool input_value(const cJSON* e, const char* key, const char* dir, manifest_job* j,
                        const char** dst, char* msg, size_t cap) {
    *dst = path_value(e, key, dir, j, msg, cap);
    j->input[j->ninput++] = *dst;
    return *dst != NULL;
}

/* One key of a line. */
static bool key_value(key_id k, const cJSON* e, const char* dir, manifest_job* j, char* msg,
                      size_t cap) {
    sim_job* job = &j->job;
    switch (k) {
    case K_CLIP:
        return input_value(e, KEYS[k], dir, j, &job->clip.clip, msg, cap);
    case K_OUT:
        return (job->out = path_value(e, KEYS[k], dir, j, msg, cap)) != NULL;
    case K_GAINS:
        return input_value(e, KEYS[k], dir, j, &job->gains, msg, cap);
    case K_RULES:
        return input_value(e, KEYS[k], dir, j, &job->clip.rules_path, msg, cap);
    case K_HITS:
        return hits_value(e, job, msg, cap);
    case K_HITS_FILE:
        return hits_file_value(e, dir, j, msg, cap);
    case K_REPORT:
        return report_value(e, dir, j, msg, cap);
    case K_SAMPLE_SAVE:
        return (job->sample_save = path_value(e, KEYS[k], dir, j, msg, cap)) != NULL;
    case K_SAMPLE_LOAD:
        return input_value(e, KEYS[k], dir, j, &job->sample_load, msg, cap);
    default:
        return scalar_value(k, e, job, msg, cap);
    }
}

/* simulate's checks on the outputs: all different, none of them an input. */
static bool check_outputs(const manifest_job* j, char* msg, size_t cap) {
    char outs[SIM_JOB_MAX_OUTPUTS][1024];
    const int n = sim_job_outputs(&j->job, outs);
    for (int k = 0; k < n; k++) {
        for (int m = 0; m < k; m++) {
            if (strcmp(outs[k], outs[m]) == 0) {
                return fail(msg, cap, "report", "two outputs are both '%s'", outs[k]);
            }
        }
        for (int m = 0; m < j->ninput; m++) {
            if (strcmp(outs[k], j->input[m]) == 0) {
                return fail(msg, cap, "out", "refusing to overwrite the input '%s'", outs[k]);
            }
        }
    }
    return true;
}

/* A parsed line as a job; false with "\"key\": message" in msg. */
static bool job_from_json(const cJSON* o, const char* dir, manifest_job* j, char* msg, size_t cap) {
    memset(j, 0, sizeof *j);
    sim_job_init(&j->job);
    j->job.seed = 1; /* simulate's default */
    j->job.progress = false;
    bool seen[NKEY] = {false};
    for (const cJSON* e = o->child; e; e = e->next) {
        int k = 0;
        while (k < NKEY && strcmp(e->string, KEYS[k]) != 0) {
            k++;
        }
        if (k == NKEY) {
            return unknown_key(e->string, msg, cap);
        }
        if (seen[k]) {
            return fail(msg, cap, KEYS[k], "given twice");
        }
        seen[k] = true;
        if (!key_value((key_id)k, e, dir, j, msg, cap)) {
            return false;
        }
    }
    if (!j->job.clip.clip || !j->job.out) {
        return fail(msg, cap, j->job.clip.clip ? "out" : "clip",
                    "required (every job needs \"clip\" and \"out\")");
    }
    char why[256];
    const char* field = NULL;
    if (!sim_job_sampling_ok(&j->job, &field, why, sizeof why)) {
        return fail(msg, cap, field, "%s", why);
    }
    return check_outputs(j, msg, cap);
}

void manifest_job_free(manifest_job* j) {
    for (int k = 0; k < j->nowned; k++) {
        free(j->owned[k]);
    }
    j->nowned = 0;
}

/* ---- the file ------------------------------------------------------------------------- */

typedef struct mline {
    int line;    /* 1-based */
    int index;   /* among the jobs of the whole file */
    cJSON* json; /* the parsed line, NULL when it is bad */
    char* error; /* why it is bad (owned), or NULL */
} mline;

struct manifest {
    char* path;
    char* dir; /* "" for the working directory */
    int total; /* jobs in the file */
    int n;     /* jobs in the shard */
    mline* job;
};

/* An output file and the line that writes it, for finding two lines writing one file. */
typedef struct out_ref {
    char* path;
    int line;
    int job; /* index into the shard's jobs, or -1 */
    const char* key;
} out_ref;

static int out_ref_cmp(const void* a, const void* b) {
    const out_ref* x = a;
    const out_ref* y = b;
    const int c = strcmp(x->path, y->path);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* The whole file (a pipe too), NUL-terminated; NULL with the reason in err. */
static char* read_all(const char* path, size_t* len, char* err, size_t cap) {
    FILE* f = fopen(path, "rb");
    struct stat st;
    if (!f) {
        snprintf(err, cap, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, cap, "%s: is a directory, expected a manifest file", path);
        fclose(f);
        return NULL;
    }
    char* buf = NULL;
    size_t n = 0, size = 0;
    for (;;) {
        if (n + 1 >= size) {
            size = size ? 2 * size : 1 << 16;
            char* grown = size <= (size_t)MANIFEST_MAX_BYTES ? realloc(buf, size) : NULL;
            if (!grown) {
                snprintf(err, cap, "%s: %s", path,
                         size > (size_t)MANIFEST_MAX_BYTES ? "expected a manifest under 1 GiB"
                                                           : "out of memory");
                break;
            }
            buf = grown;
        }
        const size_t got = fread(buf + n, 1, size - 1 - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                snprintf(err, cap, "%s: read failed", path);
                break;
            }
            buf[n] = '\0';
            *len = n;
            fclose(f);
            return buf;
        }
    }
    free(buf);
    fclose(f);
    return NULL;
}

/* Parses one job line (NUL-terminated in place, n bytes); NULL with "path:line: ..." in
 * *error (owned) when it is bad. */
static cJSON* parse_line(const manifest* m, const char* text, size_t n, int line, char** error) {
    char msg[1200];
    const char* end = NULL;
    cJSON* o = NULL;
    if (memchr(text, '\0', n)) {
        snprintf(msg, sizeof msg, "%s:%d: not valid JSON (a NUL byte at column %ld)", m->path, line,
                 (long)((const char*)memchr(text, '\0', n) - text) + 1);
    } else if (!(o = cJSON_ParseWithLengthOpts(text, n + 1, &end, true))) {
        /* cJSON's end points where it stopped: at the error or at trailing text */
        const long col = end ? (long)(end - text) + 1 : 1;
        snprintf(msg, sizeof msg, "%s:%d: not valid JSON (at column %ld)", m->path, line, col);
    } else if (!cJSON_IsObject(o)) {
        snprintf(msg, sizeof msg, "%s:%d: expected an object {\"clip\": ..., \"out\": ...}",
                 m->path, line);
        cJSON_Delete(o);
        o = NULL;
    }
    *error = o ? NULL : strdup(msg);
    return o;
}

/* Checks a parsed line as a job and notes its outputs; on a bad one sets *error. */
static void check_line(const manifest* m, const cJSON* o, int line, int job, char** error,
                       out_ref** refs, int* nref, int* capref) {
    manifest_job* j = malloc(sizeof *j);
    char msg[1024];
    if (!j || !job_from_json(o, m->dir, j, msg, sizeof msg)) {
        char full[1200];
        snprintf(full, sizeof full, "%s:%d: %s", m->path, line, j ? msg : "out of memory");
        *error = strdup(full);
    } else {
        char outs[SIM_JOB_MAX_OUTPUTS][1024];
        const int n = sim_job_outputs(&j->job, outs);
        for (int k = 0; k < n; k++) {
            if (*nref == *capref) {
                *capref = *capref ? 2 * *capref : 64;
                out_ref* grown = realloc(*refs, (size_t)*capref * sizeof **refs);
                if (!grown) {
                    break; /* no duplicate check past memory; the run itself needs far less */
                }
                *refs = grown;
            }
            const bool report = k >= 2 && !(j->job.gltf && k == n - 1);
            (*refs)[(*nref)++] = (out_ref){strdup(outs[k]), line, job, report ? "report" : "out"};
        }
    }
    if (j) {
        manifest_job_free(j);
    }
    free(j);
}

/* Two lines writing one file: the later one is an error. */
static void mark_duplicates(manifest* m, out_ref* refs, int nref) {
    if (nref > 0) {
        qsort(refs, (size_t)nref, sizeof *refs, out_ref_cmp);
    }
    for (int k = 1; k < nref; k++) {
        const out_ref* r = &refs[k];
        if (r->job < 0 || m->job[r->job].error || !refs[k - 1].path || !r->path ||
            strcmp(refs[k - 1].path, r->path) != 0 || refs[k - 1].line == r->line) {
            continue;
        }
        int first = k - 1;
        while (first > 0 && strcmp(refs[first - 1].path, r->path) == 0) {
            first--;
        }
        char msg[1400];
        snprintf(msg, sizeof msg, "%s:%d: \"%s\": line %d also writes %s", m->path, r->line, r->key,
                 refs[first].line, r->path);
        m->job[r->job].error = strdup(msg);
        cJSON_Delete(m->job[r->job].json);
        m->job[r->job].json = NULL;
    }
    for (int k = 0; k < nref; k++) {
        free(refs[k].path);
    }
}

static void set_dir(manifest* m) {
    const char* slash = strrchr(m->path, '/');
    const size_t n = !slash ? 0 : slash == m->path ? 1 : (size_t)(slash - m->path);
    m->dir = malloc(n + 1);
    if (m->dir) {
        memcpy(m->dir, m->path, n);
        m->dir[n] = '\0';
    }
}

/* Every job line of the text: parsed, checked, the shard's kept. */
static bool read_lines(manifest* m, char* text, size_t len, int shard, int nshard) {
    out_ref* refs = NULL;
    int nref = 0, capref = 0, cap = 0, line = 0;
    size_t at = (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0; /* UTF-8 BOM */
    while (at < len) {
        line++;
        const char* eol = memchr(text + at, '\n', len - at);
        size_t n = eol ? (size_t)(eol - (text + at)) : len - at;
        char* s = text + at;
        at += n + 1;
        n -= (n > 0 && s[n - 1] == '\r');
        s[n] = '\0'; /* over the '\n' or '\r', or read_all's terminating NUL */
        size_t lead = 0;
        while (lead < n && (s[lead] == ' ' || s[lead] == '\t')) {
            lead++;
        }
        if (lead == n || s[lead] == '#') {
            continue;
        }
        const int index = m->total++;
        const bool mine = index % nshard == shard;
        if (mine && m->n == cap) {
            cap = cap ? 2 * cap : 64;
            mline* grown = realloc(m->job, (size_t)cap * sizeof *grown);
            if (!grown) {
                free(refs);
                return false;
            }
            m->job = grown;
        }
        char* error = NULL;
        cJSON* o = parse_line(m, s, n, line, &error);
        if (o) {
            check_line(m, o, line, mine ? m->n : -1, &error, &refs, &nref, &capref);
        }
        if (mine) {
            m->job[m->n++] = (mline){line, index, error ? NULL : o, error};
        }
        if (!mine || error) {
            cJSON_Delete(o);
            free(mine ? NULL : error);
        }
    }
    mark_duplicates(m, refs, nref);
    free(refs);
    return true;
}

manifest* manifest_read(const char* path, int shard, int nshard, char* err, size_t cap) {
    size_t len = 0;
    char* text = read_all(path, &len, err, cap);
    if (!text) {
        return NULL;
    }
    manifest* m = calloc(1, sizeof *m);
    if (m) {
        m->path = strdup(path);
        set_dir(m);
    }
    if (!m || !m->path || !m->dir || !read_lines(m, text, len, shard, nshard)) {
        snprintf(err, cap, "%s: out of memory", path);
        free(text);
        manifest_destroy(m);
        return NULL;
    }
    free(text);
    if (m->total == 0) {
        snprintf(err, cap, "%s: no jobs (every line is blank or a # comment)", path);
        manifest_destroy(m);
        return NULL;
    }
    return m;
}

void manifest_destroy(manifest* m) {
    if (!m) {
        return;
    }
    for (int k = 0; k < m->n; k++) {
        cJSON_Delete(m->job[k].json);
        free(m->job[k].error);
    }
    free(m->job);
    free(m->dir);
    free(m->path);
    free(m);
}

int manifest_total(const manifest* m) {
    return m->total;
}

int manifest_count(const manifest* m) {
    return m->n;
}

int manifest_line(const manifest* m, int i) {
    return m->job[i].line;
}

bool manifest_job_get(const manifest* m, int i, manifest_job* j, char* err, size_t cap) {
    const mline* l = &m->job[i];
    if (!l->json) {
        snprintf(err, cap, "%s", l->error ? l->error : "out of memory");
        memset(j, 0, sizeof *j);
        return false;
    }
    char msg[1024];
    if (!job_from_json(l->json, m->dir, j, msg, sizeof msg)) {
        /* the line was checked when read; only a hits file changed since can fail here */
        snprintf(err, cap, "%s:%d: %s", m->path, l->line, msg);
        manifest_job_free(j);
        return false;
    }
    return true;
}
