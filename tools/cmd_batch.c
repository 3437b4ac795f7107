/* featherbone batch: the simulate jobs of a manifest on N threads, one shard of it per
 * process when a cluster runs it as a job array (docs/BATCH.md). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT; open_memstream, flockfile (POSIX) */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "manifest.h"
#include "sim_job.h"

static const char USAGE[] =
    "usage: featherbone batch MANIFEST.jsonl [--jobs N] [--shard I/N | --shard slurm] [--force]\n"
    "\n"
    "Runs the simulate jobs of a manifest, several at once. The manifest holds one JSON object\n"
    "per line, one job each, with the keys of the simulate options:\n"
    "  {\"clip\": \"walk.bvh\", \"out\": \"out/walk_hit.bvh\", \"hits\": "
    "[\"time=1.2,target=LeftElbow\"],\n"
    "   \"frames\": \"100:220\", \"report\": [\"out/walk_hit.html\", \"out/walk_hit.json\"]}\n"
    "keys: clip, out (both required), gains, hits (spec strings or objects as in a hits file),\n"
    "hits_file, random_hits, seed, controller, root, rate, frames (\"A:B\"), report (a file or a\n"
    "list of two), format (\"gltf\"), self_collision, keep_placement, rules, lossless, mass,\n"
    "mass_model, scale, height, up, pos_mode, no_assimp, free_positions, sample, sample_save,\n"
    "sample_load, sample_hit_scale, sample_pull, sample_step, sample_root_scale,\n"
    "sample_height_scale, sample_upright, sample_hit, anchor; see simulate --help for their "
    "meaning.\n"
    "Relative paths are relative to the manifest's directory. Blank lines and lines starting\n"
    "with # are skipped. A bad line (unknown key, wrong type, bad value) fails that job only.\n"
    "\n"
    "  --jobs N        N jobs at once, one thread each (default: the CPUs this process may use)\n"
    "  --shard I/N     run only the jobs whose index k (0-based, counting job lines) has\n"
    "                  k % N == I - 1; I is 1-based: --shard 1/4 ... --shard 4/4 cover all\n"
    "  --shard slurm   the shard of this Slurm array task: (SLURM_ARRAY_TASK_ID -\n"
    "                  SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP of SLURM_ARRAY_TASK_COUNT,\n"
    "                  so --array=0-9 and --array=1-10 both work\n"
    "  --force         run every job, also those whose outputs are complete\n"
    "\n"
    "A job whose outputs (OUT.bvh, OUT.balls.json, the reports, OUT.gltf) all exist and are\n"
    "none older than its inputs (clip, gains, hits file, rules) is skipped: each output is\n"
    "written whole or not at all, so an interrupted batch resumes where it stopped. Each job's\n"
    "messages are printed together when it ends, each line prefixed with [line L], L its line\n"
    "in the manifest; on a terminal a status line counts the jobs.\n"
    "\n"
    "exit codes: 0 every job done or skipped, 1 a job failed, 2 bad usage or an unreadable\n"
    "manifest\n";

/* A job that was skipped, beside the exit codes of sim_job_run. */
#define BATCH_SKIPPED (-1)

typedef struct batch {
    const manifest* m;
    const char* path; /* the manifest, as given */
    bool force;
    bool tty;             /* stderr is a terminal: keep a status line */
    pthread_mutex_t lock; /* guards what follows, and stderr */
    int next;             /* the next job to take */
    int running, simulated, skipped, failed;
    int* result; /* (count) exit code of each finished job, BATCH_SKIPPED */
} batch;

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- skipping ------------------------------------------------------------------------- */

static bool older(struct timespec a, struct timespec b) {
    return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

/* Every output exists and none is older than an input. A missing input is not complete: the
 * job runs and says what is missing. */
static bool outputs_complete(const manifest_job* j) {
    const char* inputs[MANIFEST_MAX_INPUTS + 1];
    int nin = 0;
    for (int k = 0; k < j->ninput; k++) {
        inputs[nin++] = j->input[k];
    }
    char rules[1024];
    if (!j->job.clip.rules_path && !j->job.clip.lossless) {
        inputs[nin++] = data_file("character_rules.json", rules, sizeof rules);
    }
    struct timespec newest = {0, 0};
    struct stat st;
    for (int k = 0; k < nin; k++) {
        if (stat(inputs[k], &st) != 0) {
            return false;
        }
        newest = older(newest, st.st_mtim) ? st.st_mtim : newest;
    }
    char outs[SIM_JOB_MAX_OUTPUTS][1024];
    const int n = sim_job_outputs(&j->job, outs);
    for (int k = 0; k < n; k++) {
        if (stat(outs[k], &st) != 0 || older(st.st_mtim, newest)) {
            return false;
        }
    }
    return true;
}

/* ---- one job -------------------------------------------------------------------------- */

/* Each input opens for reading; else says which does not, in the job's messages. (The clip
 * loader would say it too, but straight to stderr, outside the job's block.) */
static bool inputs_readable(const manifest_job* j, FILE* log, const char* tag) {
    for (int k = 0; k < j->ninput; k++) {
        FILE* f = fopen(j->input[k], "rb");
        if (!f) {
            fprintf(log, "%s: %s: cannot open: %s\n", tag, j->input[k], strerror(errno));
            return false;
        }
        fclose(f);
    }
    return true;
}

/* Runs the batch's job i with its messages to log; returns its exit code or BATCH_SKIPPED. */
static int run_one(const batch* b, int i, FILE* log) {
    char tag[1100];
    snprintf(tag, sizeof tag, "%s:%d", b->path, manifest_line(b->m, i));
    manifest_job* j = malloc(sizeof *j);
    char err[1500];
    int rc = EXIT_OK;
    const double t0 = wall_s();
    if (!j) {
        fprintf(log, "%s: out of memory\n", tag);
        return EXIT_FAIL;
    }
    if (!manifest_job_get(b->m, i, j, err, sizeof err)) {
        fprintf(log, "%s\n", err);
        rc = EXIT_USAGE;
    } else if (!b->force && outputs_complete(j)) {
        rc = BATCH_SKIPPED;
    } else if (!inputs_readable(j, log, tag)) {
        rc = EXIT_USAGE;
    } else {
        rc = sim_job_run(&j->job, log, tag);
    }
    if (rc == BATCH_SKIPPED) {
        fprintf(log, "%s: skipped (outputs complete)\n", tag);
    } else if (rc == EXIT_OK) {
        fprintf(log, "%s: done in %.1f s\n", tag, wall_s() - t0);
    } else {
        fprintf(log, "%s: failed (exit %d)\n", tag, rc);
    }
    manifest_job_free(j);
    free(j);
    return rc;
}

/* ---- output --------------------------------------------------------------------------- */

/* The status line of a terminal: jobs ended (done, skipped or failed) of the shard's. */
static void status(const batch* b) {
    if (b->tty) {
        const int ended = b->simulated + b->skipped + b->failed;
        fprintf(stderr, "\r\033[Kbatch: %d/%d done, %d failed, %d running", ended,
                manifest_count(b->m), b->failed, b->running);
        fflush(stderr);
    }
}

/* A finished job's messages, whole, each line prefixed with its manifest line; with the lock
 * held. flockfile keeps out a line anything else writes to stderr meanwhile. */
static void print_job(const batch* b, int line, const char* text) {
    flockfile(stderr);
    if (b->tty) {
        fputs("\r\033[K", stderr);
    }
    for (const char* s = text; *s;) {
        const char* eol = strchr(s, '\n');
        const int n = eol ? (int)(eol - s) : (int)strlen(s);
        fprintf(stderr, "[line %d] %.*s\n", line, n, s);
        s += n + (eol != NULL);
    }
    status(b);
    funlockfile(stderr);
}

static void* worker(void* arg) {
    batch* b = arg;
    for (;;) {
        pthread_mutex_lock(&b->lock);
        const int i = b->next < manifest_count(b->m) ? b->next++ : -1;
        b->running += i >= 0;
        if (i >= 0) {
            status(b);
        }
        pthread_mutex_unlock(&b->lock);
        if (i < 0) {
            return NULL;
        }
        char* text = NULL;
        size_t len = 0;
        FILE* log = open_memstream(&text, &len);
        const int rc = log ? run_one(b, i, log) : EXIT_FAIL;
        if (log) {
            fclose(log);
        }
        pthread_mutex_lock(&b->lock);
        b->running--;
        b->result[i] = rc;
        b->simulated += rc == EXIT_OK;
        b->skipped += rc == BATCH_SKIPPED;
        b->failed += rc != EXIT_OK && rc != BATCH_SKIPPED;
        print_job(b, manifest_line(b->m, i),
                  text ? text : "featherbone batch: out of memory for the job's messages\n");
        pthread_mutex_unlock(&b->lock);
        free(text);
    }
}

/* The last lines: the counts, the wall time, the failed lines to look at. */
static void summary(const batch* b, int shard, int nshard, int nthread, double wall) {
    if (b->tty) {
        fputs("\r\033[K", stderr);
    }
    char where[64] = "";
    if (nshard > 1) {
        snprintf(where, sizeof where, " (shard %d/%d of %d)", shard + 1, nshard,
                 manifest_total(b->m));
    }
    const int n = manifest_count(b->m);
    fprintf(stderr,
            "batch: %s: %d job%s%s, %d at once: %d done, %d skipped, %d failed; %.1f s wall\n",
            b->path, n, n == 1 ? "" : "s", where, nthread, b->simulated, b->skipped, b->failed,
            wall);
    if (b->failed) {
        fprintf(stderr, "batch: failed lines:");
        for (int i = 0; i < manifest_count(b->m); i++) {
            if (b->result[i] != EXIT_OK && b->result[i] != BATCH_SKIPPED) {
                fprintf(stderr, " %d", manifest_line(b->m, i));
            }
        }
        fputc('\n', stderr);
    }
}

/* ---- the command ---------------------------------------------------------------------- */

/* The CPUs this process may run on (under Slurm: its allocation), else those online. */
static int default_jobs(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
        return CPU_COUNT(&set);
    }
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* An integer environment variable into *out; false (and *out untouched) when unset or not
 * an integer. */
static bool env_long(const char* name, long* out) {
    const char* v = getenv(name);
    char* end = NULL;
    const long x = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end != '\0') {
        return false;
    }
    *out = x;
    return true;
}

/* --shard I/N (1-based I) or --shard slurm, as a 0-based shard of nshard. */
static bool parse_shard(const char* val, int* shard, int* nshard) {
    long i = 0, n = 0;
    if (val && strcmp(val, "slurm") == 0) {
        long id = 0, lo = 0, step = 1;
        if (!env_long("SLURM_ARRAY_TASK_ID", &id) || !env_long("SLURM_ARRAY_TASK_MIN", &lo) ||
            !env_long("SLURM_ARRAY_TASK_COUNT", &n)) {
            fprintf(stderr, "featherbone batch: --shard slurm: SLURM_ARRAY_TASK_ID, _MIN and "
                            "_COUNT are not all set (not a task of an sbatch --array job?)\n");
            return false;
        }
        if (!env_long("SLURM_ARRAY_TASK_STEP", &step) || step < 1) {
            step = 1;
        }
        i = (id - lo) % step == 0 ? (id - lo) / step + 1 : 0;
    } else if (val) {
        char* end = NULL;
        i = strtol(val, &end, 10);
        n = *end == '/' ? strtol(end + 1, &end, 10) : 0;
        if (*end != '\0') {
            n = 0;
        }
    }
    if (n < 1 || n > 1000000 || i < 1 || i > n) {
        fprintf(stderr,
                "featherbone batch: --shard: expected I/N with 1 <= I <= N (or slurm, in "
                "an array task with a constant step), found '%s'%s\n",
                val ? val : "(nothing)",
                val && strcmp(val, "slurm") == 0 ? " giving no shard" : "");
        return false;
    }
    *shard = (int)i - 1;
    *nshard = (int)n;
    return true;
}

/* Options into b and the rest; returns -1 to go on, else the exit code. */
static int parse_args(int argc, char** argv, batch* b, int* njob, int* shard, int* nshard) {
    for (int i = 0; i < argc; i++) {
        const char* val = i + 1 < argc ? argv[i + 1] : NULL;
        if (is_help(argv[i])) {
            fputs(USAGE, stdout);
            return EXIT_OK;
        } else if (strcmp(argv[i], "--force") == 0) {
            b->force = true;
        } else if (strcmp(argv[i], "--jobs") == 0 || strcmp(argv[i], "-j") == 0) {
            if (!parse_positive_int(argv[i], val, njob)) {
                return EXIT_USAGE;
            }
            i++;
        } else if (strcmp(argv[i], "--shard") == 0) {
            if (!parse_shard(val, shard, nshard)) {
                return EXIT_USAGE;
            }
            i++;
        } else if (argv[i][0] == '-' || b->path) {
            fprintf(stderr, "featherbone batch: unexpected argument '%s'\n%s", argv[i], USAGE);
            return EXIT_USAGE;
        } else {
            b->path = argv[i];
        }
    }
    if (!b->path) {
        fprintf(stderr, "featherbone batch: expected MANIFEST.jsonl\n%s", USAGE);
        return EXIT_USAGE;
    }
    return -1;
}

/* Starts the workers (as many as there are jobs, at most njob) and waits for them; with no
 * thread to be had, runs the jobs on this one. Returns the workers used. */
static int run_workers(batch* b, int njob) {
    const int nthread = njob < manifest_count(b->m) ? njob : manifest_count(b->m);
    pthread_t* tid = calloc((size_t)(nthread > 0 ? nthread : 1), sizeof *tid);
    int started = 0;
    while (tid && started < nthread && pthread_create(&tid[started], NULL, worker, b) == 0) {
        started++;
    }
    if (started == 0 && nthread > 0) {
        worker(b);
        started = 1;
    }
    for (int t = 0; tid && t < started; t++) {
        pthread_join(tid[t], NULL);
    }
    free(tid);
    return started;
}

int cmd_batch(int argc, char** argv) {
    batch b = {0};
    int njob = default_jobs(), shard = 0, nshard = 1;
    const int rc = parse_args(argc, argv, &b, &njob, &shard, &nshard);
    if (rc >= 0) {
        return rc;
    }
    char err[1200];
    manifest* m = manifest_read(b.path, shard, nshard, err, sizeof err);
    if (!m) {
        fprintf(stderr, "featherbone batch: %s\n", err);
        return EXIT_USAGE;
    }
    b.m = m;
    b.tty = isatty(fileno(stderr));
    b.result = calloc((size_t)manifest_count(m) + 1, sizeof *b.result);
    if (!b.result || pthread_mutex_init(&b.lock, NULL) != 0) {
        fprintf(stderr, "featherbone batch: out of memory\n");
        free(b.result);
        manifest_destroy(m);
        return EXIT_FAIL;
    }
    const double t0 = wall_s();
    const int nthread = run_workers(&b, njob);
    summary(&b, shard, nshard, nthread, wall_s() - t0);
    pthread_mutex_destroy(&b.lock);
    free(b.result);
    manifest_destroy(m);
    return b.failed ? EXIT_FAIL : EXIT_OK;
}
