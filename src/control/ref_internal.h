/* What the files of the reference (fb_ref, include/featherbone/control.h) share; internal.
 *
 *   ref.c          the reference object: checks, allocation, the steps below in order, and
 *                  fb_ref_at [Cline §5.1]
 *   repair.c       capture glitches repaired, end segments turned out of the ground
 *   fit.c          the smooth fit: local polynomials [Savitzky–Golay] on SO(3) for rotations,
 *                  the smoothing chosen by GCV [Craven–Wahba, Woltring]
 *   placement.c    the clip placed on the ground; the lowest point of a body's shapes
 *   feedforward.c  the integrator's velocities and accelerations, the feedforward torques of
 *                  inverse dynamics [RBDA T5.1], and their CSV
 *   contact.c      the contact plan: which feet and toes stand on the ground, when and where
 *   ground.c       the grounded copy (fb_ref_grounded): feet flat on the ground in stance by
 *                  inverse kinematics of the legs */
#ifndef FB_CONTROL_REF_INTERNAL_H
#define FB_CONTROL_REF_INTERNAL_H

#include "featherbone/collision.h"
#include "featherbone/control.h"

/* ---- the fit (fit.c) ---------------------------------------------------------------------- */

/* Largest half window accepted. */
#define FIT_HALF_WINDOW_MAX 32

/* The (half window, degree) pairs GCV chooses from, least smoothing first. */
#define FIT_NLADDER 10
extern const int fb_fit_ladder[FIT_NLADDER][2];

/* Least-squares weights over a window: value, first and second derivative (per unit of the
 * normalised time s) at s = x of the polynomial of degree p fitted to samples at s_j. */
typedef struct fit_weights {
    int lo, n;                    /* window: samples lo .. lo + n - 1 */
    double w[3][2 * FIT_HALF_WINDOW_MAX + 1];
} fit_weights;

/* The weights of the window of 2 hw + 1 of ns samples around sample k (slid inwards at the
 * ends), evaluated at x (in samples); false if singular. */
bool fb_fit_window(int ns, int k, double x, int hw, int degree, fit_weights* fw);

/* GCV choice of each body's (window, degree) pair among `pairs` (npair of them) for the
 * samples qs (ns x nq); score: (npair x nbody) scratch; writes choice (nbody). */
bool fb_fit_choose(const fb_model* m, int ns, const double* qs, const int (*pairs)[2],
                   int npair, double* score, int* choice);

/* q, v, a of every joint at time x (in samples, sdt apart) of the samples qs (ns x nq), body b
 * fitted with the pair pairs[choice[b]]. */
bool fb_fit_frame(const fb_model* m, int ns, double sdt, const double* qs, double x,
                  const int (*pairs)[2], const int* choice, double* q, double* v, double* a);

/* The fit a changed copy of a reference's frames is refitted with (at the reference's rate). */
#define FIT_REFIT_HALF_WINDOW 4
#define FIT_REFIT_DEGREE 5

/* v and a of out's frames near those changed (changed[i] != 0) from q_before (nframe x nq) to
 * out->q: theirs plus the change in the rates the fit at out's rate sees (its window of
 * 2 FIT_REFIT_HALF_WINDOW + 1 frames), so that frames whose window holds no changed frame keep
 * theirs bit for bit. tmp: 2 nq + 4 nv doubles and nbody ints. False when a window is
 * singular. */
bool fb_fit_rates_changed(const fb_model* m, const double* q_before, fb_ref* out,
                          const unsigned char* changed, double* tmp);

/* ---- before the fit (repair.c) -------------------------------------------------------------- */

/* Repairs the capture glitches of the samples qs (ns x nq) in place; counts and warnings into
 * r. frame0 numbers the first sample. False when out of memory. */
bool fb_ref_repair_glitches(const fb_model* m, double* qs, int ns, double sample_dt, int frame0,
                            const fb_allocator* al, fb_ref* r);

/* Turns every end segment of the samples out of the ground; warnings into r. False when out
 * of memory. */
bool fb_ref_clear_end_segments(const fb_model* m, double* qs, int ns, int frame0, fb_data* d,
                               const fb_allocator* al, fb_ref* r);

/* Whether body b is an end segment: a hinge with shapes whose descendants are only End Site
 * markers (turning it moves no joint of the clip). */
bool fb_ref_end_segment(const fb_model* m, int b);

/* How far end segment b's hinge must turn from its angle in d->q, way `way` (+1, -1), to lift
 * its lowest point to `target` over g (kinematics of d current), within the joint's range:
 * the turn's size, 0 when it is there already, NAN when that way does not reach it. d->q and
 * b's kinematics are as they were on return. */
double fb_ref_clearing_turn(const fb_model* m, fb_data* d, int b, fb_plane g, double target,
                            int way);

/* ---- the grounded reference smoothed (ground_smooth.c) -------------------------------------- */

/* What fb_ground_smooth did. */
typedef struct ground_smooth_info {
    int half_window;   /* H, frames either side (0: not smoothed) */
    double most_moved; /* m, the largest distance the smoothing moved a body's origin */
    int moved_body, moved_frame;
    int below;      /* frames with a shape over 1 mm in the ground after it */
    double deepest; /* m, the lowest shape's height there (<= 0) */
} ground_smooth_info;

/* Doubles of scratch fb_ground_smooth needs for nf frames of m. */
#define GROUND_SMOOTH_TMP(m, nf) ((size_t)(nf) * (size_t)(m)->nq + 3 * (size_t)(m)->nbody)

/* Smooths r's frames over smooth_time (s) either side: the cubic fitted by least squares to the
 * frames within it, rotations in the tangent space at each frame, every joint back into its
 * range. Only r->q changes (a landing foot may go into the ground by a few mm; the caller
 * recomputes the rates). tmp: GROUND_SMOOTH_TMP doubles. False when a fit window is
 * singular. */
bool fb_ground_smooth(const fb_model* m, fb_ref* r, double smooth_time, fb_data* d, double* tmp,
                      ground_smooth_info* info);

/* ---- on the ground (placement.c) ------------------------------------------------------------ */

/* Signed height over the plane of body b's lowest shape point (m). Needs FB_STAGE_POS. */
double fb_lowest_point(const fb_model* m, const fb_data* d, int b, fb_plane g);

/* Shifts the reference's frames r->q and the ns samples qs so that the lowest point of the
 * character's shapes over all frames is on the ground; a warning into r. */
void fb_ref_place_on_ground(const fb_model* m, fb_ref* r, double* qs, int ns, fb_data* d);

/* ---- after the fit (feedforward.c) ---------------------------------------------------------- */

/* r->v_step, r->a_step and the feedforward torques r->tau from the fitted frames r->q; qs: the
 * nsample samples the fit read, followed by scratch for one q and two v. */
void fb_ref_feedforward(const fb_model* m, fb_ref* r, double* qs, int nsample,
                        double sample_dt, const int (*pairs)[2], const int* choice,
                        fb_data* d);

/* Its parts: r->v_step of frames 1 .. nframe-1 from r->q; then r->a_step and r->tau of every
 * frame from r->v_step (frame 0's set by the caller). */
void fb_ref_step_velocities(const fb_model* m, fb_ref* r);
void fb_ref_step_torques(const fb_model* m, fb_ref* r, fb_data* d);

/* The same for frames [from, to) only, each frame's as the whole's (the sampling search lays
 * again only the frames a new control point moves, src/sim/sample.c); a_step of frame i reads
 * v_step of frame i + 1, the last frame's a_step the one before's. */
void fb_ref_step_velocities_range(const fb_model* m, fb_ref* r, long from, long to);
void fb_ref_step_torques_range(const fb_model* m, fb_ref* r, fb_data* d, long from, long to);

/* ---- the contact plan (contact.c) ----------------------------------------------------------- */

/* A leg of the model as the plan and the grounded reference use it: a foot (a body with a box
 * shape and a ball joint), the knee above it (hinge or ball joint), the hip above that (ball
 * joint), neither the root; its toe (the foot's first child body with a shape, -1: none). */
typedef struct fb_leg {
    int foot, knee, hip, toe;
    int box;       /* the foot's box shape */
    int toe_shape; /* the toe's first shape, -1: none */
    /* the sole: the box face turned most downwards in the rest pose (foot coordinates): its
     * outward normal, its centre, and the box axis along it that points forwards */
    fb_v3 sole_n, sole_c, sole_fwd;
} fb_leg;

/* The model's legs, at most max; returns how many. */
int fb_ref_legs(const fb_model* m, fb_leg* legs, int max);

/* Most legs a model may have for the plan (a centipede's further legs are not followed). */
#define FB_REF_MAX_LEGS 8

/* Finds the contact plan of the reference's frames (r->q) and stores it in r (ncontact,
 * contact, stance_at, floor). False when out of memory. */
bool fb_ref_contact_plan(const fb_model* m, fb_ref* r, fb_data* d);

/* Copies src's contact plan into dst (same frames). False when out of memory. */
bool fb_ref_copy_plan(const fb_ref* src, fb_ref* dst);

/* Lowest point over the plane of body b's shapes when the body is at (R, p) (body -> world),
 * without kinematics. */
double fb_lowest_point_at(const fb_model* m, int b, fb_m3 R, fb_v3 p, fb_plane g);

/* ---- the object (ref.c) --------------------------------------------------------------------- */

/* A reference of nf frames dt apart for model m, every array allocated and nothing filled but
 * repaired (zeros); NULL when out of memory. */
fb_ref* fb_ref_alloc(const fb_model* m, long nf, double dt, const fb_allocator* a);

/* Puts a warning line first (what moved the reference as a whole or over many frames). */
void fb_ref_warn_first(fb_ref* r, const char* text);

#endif /* FB_CONTROL_REF_INTERNAL_H */
