/* A batch manifest: a JSON Lines file, one `featherbone simulate` job per line, read for
 * `featherbone batch` (docs/BATCH.md). cJSON stays inside manifest.c. */
#ifndef FB_TOOLS_MANIFEST_H
#define FB_TOOLS_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>

#include "sim_job.h"

#define MANIFEST_MAX_INPUTS 5 /* clip, gains, hits_file, rules, sample_load */
#define MANIFEST_MAX_OWNED 10 /* the resolved paths a job owns */

/* One job of a manifest, ready for sim_job_run. Its paths are resolved against the
 * manifest's directory and owned by it (manifest_job_free). */
typedef struct manifest_job {
    sim_job job; /* progress is false */
    int ninput;
    const char* input[MANIFEST_MAX_INPUTS]; /* the files the outputs are computed from */
    int nowned;
    char* owned[MANIFEST_MAX_OWNED];
} manifest_job;

typedef struct manifest manifest;

/* Reads the manifest at `path` and keeps the jobs of one shard: those whose index k (0-based,
 * counting lines that are neither blank nor start with '#') has k % nshard == shard. Every
 * line is checked (a bad line is an error of that job, kept for manifest_job_get) and two jobs
 * writing the same file are an error of the later one, in every shard alike. Returns NULL with
 * a message in err (cap bytes) when the file cannot be read or holds no job: exit code 2. */
manifest* manifest_read(const char* path, int shard, int nshard, char* err, size_t cap);
void manifest_destroy(manifest* m);

/* Jobs in the whole file, and in the shard kept. */
int manifest_total(const manifest* m);
int manifest_count(const manifest* m);

/* The 1-based line number of the shard's job i (0 <= i < manifest_count). */
int manifest_line(const manifest* m, int i);

/* Fills j with the shard's job i. On a bad line returns false with the message, which names
 * the manifest, the line and the key ("jobs.jsonl:4: \"rate\": expected ..."), in err; j then
 * holds nothing to free. Thread-safe for calls with different i (the parsed lines are only
 * read). */
bool manifest_job_get(const manifest* m, int i, manifest_job* j, char* err, size_t cap);
void manifest_job_free(manifest_job* j);

#endif /* FB_TOOLS_MANIFEST_H */
