/* What the world's contacts are made of and between which bodies: each articulation's material
 * (friction, restitution [Kokkevis §6]) and the self-collision pairs of an articulation's
 * bodies (off by default; docs/CONSTRAINTS.md), the table the world's narrow phase reads
 * (world.c, collide_all); and what the last step's contacts did (their forces and impulses). */
#include "featherbone/world.h"

#include <math.h>

#include "featherbone/dynamics.h"
#include "math/vec3.h"
#include "sim/world_internal.h"
#include "util/error.h"

fb_status fb_world_set_material(fb_world* w, int k, double mu, double restitution,
                                fb_error* err) {
    if (k < 0 || k >= w->nart) {
        return fb_fail(err, FB_EINVAL, "material: articulation: expected 0..%d, found %d",
                       w->nart - 1, k);
    }
    if (!(mu >= 0.0) || !isfinite(mu) || !(restitution >= 0.0 && restitution <= 1.0)) {
        return fb_fail(err, FB_EINVAL,
                       "material: expected mu >= 0 and restitution in [0, 1], found %g, %g", mu,
                       restitution);
    }
    w->mu[k] = mu;
    w->e[k] = restitution;
    return fb_ok(err);
}

fb_status fb_world_set_rolling(fb_world* w, int k, double length, fb_error* err) {
    if (k < 0 || k >= w->nart) {
        return fb_fail(err, FB_EINVAL, "rolling resistance: articulation: expected 0..%d, found %d",
                       w->nart - 1, k);
    }
    if (!(length >= 0.0 && length <= 0.1)) {
        return fb_fail(err, FB_EINVAL, "rolling resistance: expected 0..0.1 m, found %g", length);
    }
    w->roll[k] = length;
    return fb_ok(err);
}

/* FB_EINVAL unless art is an articulation of the world; `who` names the caller. */
static fb_status check_art(const fb_world* w, const char* who, int art, fb_error* err) {
    if (art < 0 || art >= w->nart) {
        return fb_fail(err, FB_EINVAL, "%s: art: expected 0..%d, found %d", who, w->nart - 1,
                       art);
    }
    return FB_OK;
}

/* Switches the pair (a, b) of articulation art, keeping the count of pairs on. */
static void self_pair_set(fb_world* w, int art, int a, int b, bool on) {
    const int nb = w->m[art]->nbody;
    uint8_t* t = w->self_on[art];
    w->nself[art] += (int)on - (int)t[a * nb + b];
    t[a * nb + b] = t[b * nb + a] = on;
}

fb_status fb_world_set_self_collision(fb_world* w, int art, int body_a, int body_b, bool on,
                                      fb_error* err) {
    const char* who = "fb_world_set_self_collision";
    if (check_art(w, who, art, err) != FB_OK) {
        return FB_EINVAL;
    }
    const int nb = w->m[art]->nbody;
    if (body_a < 1 || body_a >= nb) {
        return fb_fail(err, FB_EINVAL, "%s: body_a: expected 1..%d, found %d", who, nb - 1,
                       body_a);
    }
    if (body_b < 1 || body_b >= nb) {
        return fb_fail(err, FB_EINVAL, "%s: body_b: expected 1..%d, found %d", who, nb - 1,
                       body_b);
    }
    if (body_a == body_b) {
        return fb_fail(err, FB_EINVAL, "%s: body_b: expected a body other than body_a (%d)", who,
                       body_a);
    }
    self_pair_set(w, art, body_a, body_b, on);
    return fb_ok(err);
}

fb_status fb_world_set_self_collision_nonadjacent(fb_world* w, int art, bool on,
                                                  fb_error* err) {
    if (check_art(w, "fb_world_set_self_collision_nonadjacent", art, err) != FB_OK) {
        return FB_EINVAL;
    }
    const fb_model* m = w->m[art];
    for (int a = 1; a < m->nbody; a++) {
        for (int b = a + 1; b < m->nbody; b++) {
            if (m->parent[b] != a) {
                self_pair_set(w, art, a, b, on);
            }
        }
    }
    return fb_ok(err);
}

fb_status fb_world_clear_self_collision_touching(fb_world* w, int art, int* cleared,
                                                 fb_error* err) {
    if (cleared) {
        *cleared = 0;
    }
    if (check_art(w, "fb_world_clear_self_collision_touching", art, err) != FB_OK) {
        return FB_EINVAL;
    }
    const fb_model* m = w->m[art];
    fb_data* d = w->d[art];
    fb_kinematics_pos(m, d);
    /* a pair touches when any shape of one body touches any of the other; w->con_next is free
     * between steps and holds the few contacts of one shape pair */
    for (int sa = 0; sa < m->nshape; sa++) {
        const int ba = m->shape[sa].body;
        for (int sb = sa + 1; sb < m->nshape; sb++) {
            const int bb = m->shape[sb].body;
            if (ba == bb || !w->self_on[art][ba * m->nbody + bb]) {
                continue;
            }
            int n = 0;
            const fb_status s = fb_collide_shape_pair(m, d, art, sa, m, d, art, sb,
                                                      w->o.contact_margin, w->con_next, &n,
                                                      w->o.max_contacts, err);
            if (s != FB_OK) {
                return s;
            }
            if (n > 0) {
                self_pair_set(w, art, ba, bb, false);
                if (cleared) {
                    (*cleared)++;
                }
            }
        }
    }
    return fb_ok(err);
}

bool fb_world_self_collision(const fb_world* w, int art, int body_a, int body_b) {
    if (art < 0 || art >= w->nart) {
        return false;
    }
    const int nb = w->m[art]->nbody;
    if (body_a < 1 || body_a >= nb || body_b < 1 || body_b >= nb) {
        return false;
    }
    return w->self_on[art][body_a * nb + body_b] != 0;
}

const fb_contact* fb_world_contacts(const fb_world* w, int* n) {
    *n = w->ncon_last;
    return w->con_last;
}

const fb_contact* fb_world_contacts_current(const fb_world* w, int* n) {
    *n = w->ncon;
    return w->con;
}

double fb_world_contact_force(const fb_world* w, int k) {
    if (k < 0 || k >= w->ncon_last || w->con_row[k] < 0 || w->con_row[k] >= w->cs->nrow) {
        return 0.0;
    }
    return w->cs->lambda[w->con_row[k]];
}

fb_v3 fb_world_pair_impulse(const fb_world* w, int art_a, int art_b) {
    const int b = art_b < 0 ? w->nart : art_b;
    if (art_a < 0 || art_a >= w->nart || b > w->nart) {
        return fb_v3_zero();
    }
    return w->imp_step[art_a][b];
}

fb_v3 fb_world_body_impulse(const fb_world* w, int art_a, int body_a, int art_b) {
    const int o = art_b < 0 ? w->nart : art_b;
    if (art_a < 0 || art_a >= w->nart || o > w->nart || body_a < 0 ||
        body_a >= w->m[art_a]->nbody) {
        return fb_v3_zero();
    }
    return w->bimp_step[w->boff[art_a] + body_a * (w->nart + 1) + o];
}

const double* fb_world_joint_impulse(const fb_world* w, int art) {
    return (art >= 0 && art < w->nart) ? w->jimp_step[art] : NULL;
}

/* ---- rolling resistance ------------------------------------------------------------------ */

/* How many of the substep's contacts are between contact c's body and the ground; *other: the
 * last of them that is not c (-1 if none). */
static int ground_contacts(const fb_world* w, int c, int* other) {
    const fb_contact* a = &w->con[c];
    int n = 0;
    *other = -1;
    for (int k = 0; k < w->ncon; k++) {
        const fb_contact* o = &w->con[k];
        const bool same = o->art_b < 0 && o->art_a == a->art_a && o->body_a == a->body_a;
        n += same;
        *other = same && k != c ? k : *other;
    }
    return n;
}

/* Two contacts of a body closer than this along the ground count as one point (the first of
 * them takes its rows: at most two a body, as the world's row count assumes). */
#define ROLL_LINE_MIN 1e-4 /* m */

fb_status fb_world_add_rolling_rows(fb_world* w, int k, int r0, fb_error* err) {
    const fb_contact* c = &w->con[k];
    const double len = w->roll[c->art_a];
    int other;
    const int n = ground_contacts(w, k, &other);
    if (n == 1) {
        return fb_contact_rolling_rows(w->cs, c, r0, len, NULL, err);
    }
    if (n != 2) {
        return FB_OK;
    }
    /* the line through the two contacts, along the ground (the plane's points are world) */
    const fb_v3 line = fb_v3_sub(w->con[other].p_b, c->p_b);
    const fb_v3 along = fb_v3_sub(line, fb_v3_scale(c->n, fb_v3_dot(line, c->n)));
    const double d = fb_v3_norm(along);
    if (!(d >= ROLL_LINE_MIN)) {
        return k < other ? fb_contact_rolling_rows(w->cs, c, r0, len, NULL, err) : FB_OK;
    }
    const fb_v3 axis = fb_v3_scale(along, 1.0 / d);
    return fb_contact_rolling_rows(w->cs, c, r0, len, &axis, err);
}
