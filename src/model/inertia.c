/* Mass properties of the solid shapes characters are made of (uniform density). */
#include <math.h>

#include "featherbone/model.h"
#include "math/vec3.h"

fb_rbi fb_rbi_capsule(double rho, double r, fb_v3 p0, fb_v3 p1) {
    const fb_v3 axis = fb_v3_sub(p1, p0);
    const double L = fb_v3_norm(axis);
    const double m_cyl = rho * FB_PI * r * r * L;
    const double m_sph = rho * 4.0 / 3.0 * FB_PI * r * r * r; /* both hemispheres */
    /* about the centre: cylinder, plus each hemisphere about its own centroid (3r/8 from the
     * flat face) moved by the parallel-axis theorem to L/2 + 3r/8 from the centre */
    const double I_along = m_cyl * r * r / 2.0 + m_sph * 2.0 * r * r / 5.0;
    const double I_across = m_cyl * (L * L / 12.0 + r * r / 4.0) +
                            m_sph * (2.0 * r * r / 5.0 + L * L / 4.0 + 3.0 * L * r / 8.0);
    /* Ic = I_across 1 + (I_along - I_across) u u^T, u the unit axis (any u when L = 0) */
    const fb_v3 u = (L > 0.0) ? fb_v3_scale(axis, 1.0 / L) : fb_v3_make(0.0, 1.0, 0.0);
    const fb_m3 Ic = fb_m3_add(fb_m3_diag(I_across, I_across, I_across),
                               fb_m3_scale(fb_m3_outer(u, u), I_along - I_across));
    return fb_rbi_from_mass_com(m_cyl + m_sph, fb_v3_scale(fb_v3_add(p0, p1), 0.5), Ic);
}

fb_rbi fb_rbi_box(double rho, fb_v3 size, fb_v3 centre) {
    const double m = rho * size.x * size.y * size.z;
    const double xx = size.x * size.x, yy = size.y * size.y, zz = size.z * size.z;
    return fb_rbi_from_mass_com(
        m, centre, fb_m3_diag(m * (yy + zz) / 12.0, m * (xx + zz) / 12.0, m * (xx + yy) / 12.0));
}

fb_rbi fb_rbi_sphere(double rho, double r, fb_v3 centre) {
    const double m = rho * 4.0 / 3.0 * FB_PI * r * r * r;
    const double I = 0.4 * m * r * r;
    return fb_rbi_from_mass_com(m, centre, fb_m3_diag(I, I, I));
}
