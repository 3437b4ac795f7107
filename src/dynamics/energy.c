/* Whole-body energy, momentum and centre of mass, for checks, reports and blow-up detection. */
#include <assert.h>

#include "featherbone/dynamics.h"
#include "math/spatial.h"

void fb_energy(const fb_model* m, const fb_data* d, double* kinetic, double* potential) {
    assert(d->stage & FB_STAGE_VEL);
    double ke = 0.0, pe = 0.0;
    for (int i = 1; i < m->nbody; i++) {
        const fb_rbi* I = &m->I[i];
        ke += 0.5 * fb_mv_dot_fv(d->v[i], fb_rbi_mv(*I, d->v[i]));
        /* m g . c_w with c_w = r + E^T h/m, written without dividing by m */
        const fb_v3 mc_w = fb_v3_axpy(fb_m3_tr_mv(d->X_0[i].E, I->h), I->m, d->X_0[i].r);
        pe -= fb_v3_dot(m->opt.gravity, mc_w);
    }
    *kinetic = ke;
    *potential = pe;
}

fb_fv fb_momentum(const fb_model* m, const fb_data* d) {
    assert(d->stage & FB_STAGE_VEL);
    fb_fv h = fb_fv_zero();
    for (int i = 1; i < m->nbody; i++) {
        /* body momentum I v, from body to world coordinates: X_0^T */
        h = fb_fv_add(h, fb_xf_tr_fv(d->X_0[i], fb_rbi_mv(m->I[i], d->v[i])));
    }
    return h;
}

fb_v3 fb_com(const fb_model* m, const fb_data* d) {
    assert(d->stage & FB_STAGE_POS);
    fb_v3 mc = fb_v3_zero();
    double mass = 0.0;
    for (int i = 1; i < m->nbody; i++) {
        mc = fb_v3_add(mc, fb_v3_axpy(fb_m3_tr_mv(d->X_0[i].E, m->I[i].h), m->I[i].m,
                                      d->X_0[i].r));
        mass += m->I[i].m;
    }
    return mass > 0.0 ? fb_v3_scale(mc, 1.0 / mass) : mc;
}
