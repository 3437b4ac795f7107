/* The DART peer's interface (peer_dart.h) in a build without DART: nothing can be created, so
 * `bench --peers` leaves DART's columns empty. */
#include "peer_dart.h"

#include <stdio.h>

static void without(fb_error* err) {
    if (err) {
        err->code = FB_EINVAL;
        snprintf(err->msg, sizeof err->msg, "built without DART (libdart-dev)");
    }
}

dart_peer* dart_peer_create(const fb_model* m, fb_error* err) {
    (void)m;
    without(err);
    return NULL;
}

void dart_peer_destroy(dart_peer* p) {
    (void)p;
}

void dart_peer_to_dart(const dart_peer* p, const double* q, const double* qd, const double* x,
                       double* pos, double* vel, double* xd) {
    (void)p, (void)q, (void)qd, (void)x, (void)pos, (void)vel, (void)xd;
}

void dart_peer_set_state(dart_peer* p, const double* pos, const double* vel) {
    (void)p, (void)pos, (void)vel;
}

void dart_peer_set_forces(dart_peer* p, const double* tau) {
    (void)p, (void)tau;
}

void dart_peer_forward(dart_peer* p) {
    (void)p;
}

void dart_peer_inverse(dart_peer* p, const double* acc) {
    (void)p, (void)acc;
}

void dart_peer_qdd(const dart_peer* p, double* qdd) {
    (void)p, (void)qdd;
}

void dart_peer_tau(const dart_peer* p, double* tau) {
    (void)p, (void)tau;
}

dart_stand* dart_stand_create(const fb_model* m, const stand_ctl* ctl, bool pgs, fb_error* err) {
    (void)m, (void)ctl, (void)pgs;
    without(err);
    return NULL;
}

void dart_stand_destroy(dart_stand* s) {
    (void)s;
}

void dart_stand_reset(dart_stand* s) {
    (void)s;
}

void dart_stand_step(dart_stand* s) {
    (void)s;
}

int dart_stand_contacts(const dart_stand* s) {
    (void)s;
    return 0;
}

double dart_stand_pelvis_y(const dart_stand* s) {
    (void)s;
    return 0.0;
}

const char* dart_peer_version(void) {
    return NULL;
}
