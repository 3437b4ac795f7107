/* featherbone-view: the scene in OpenGL 3.3 core. */
#include "render.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl.h"
#include "glsl.h"
#include "mesh.h"
#include "vmath.h"

/* ---- look ------------------------------------------------------------------------------ */

/* Body colours by side, soft but saturated enough to stay coloured in the shade. */
static const float COLOR_LEFT[3] = {0.38f, 0.56f, 0.86f};
static const float COLOR_RIGHT[3] = {0.93f, 0.50f, 0.40f};
static const float COLOR_CENTRE[3] = {0.90f, 0.70f, 0.34f};
static const float COLOR_GHOST[3] = {0.60f, 0.84f, 0.96f};
static const float COLOR_CONTACT[4] = {0.90f, 0.20f, 0.25f, 1.0f};
static const float COLOR_ARROW[4] = {0.95f, 0.78f, 0.15f, 1.0f};
static const float COLOR_BALANCE[4] = {RENDER_BALANCE_R, RENDER_BALANCE_G, RENDER_BALANCE_B,
                                       1.0f};
static const float COLOR_SUPPORT[4] = {RENDER_SUPPORT_R, RENDER_SUPPORT_G, RENDER_SUPPORT_B,
                                       1.0f};
/* the planner's target: the overlay's colour, darker */
static const float COLOR_TARGET[4] = {0.5f * RENDER_BALANCE_R, 0.5f * RENDER_BALANCE_G,
                                      0.5f * RENDER_BALANCE_B, 1.0f};
/* Sky from top to horizon; the ground fades into the horizon colour. Greys (see render.h). */
static const float SKY_TOP[3] = {0.70f, 0.73f, 0.77f};
static const float SKY_HORIZON[3] = {0.87f, 0.875f, 0.88f};
/* Shadow: black at this opacity. */
#define SHADOW_ALPHA 0.22f
/* Direction toward the key light (unnormalised): above, in front, to the left. */
static const double LIGHT_DIR[3] = {-0.35, 1.0, 0.45};
/* Shadows and grid sit this far above y = 0 (m) to stay in front of the ground. */
#define SHADOW_LIFT 0.002
/* Ground quad half-size (m); the fog hides its edge. */
#define GROUND_HALF 150.0
/* Contact marker radius (m) and arrow shaft/head radii and head length (m). */
#define CONTACT_RADIUS 0.018
#define ARROW_SHAFT 0.008
#define ARROW_HEAD 0.022
#define ARROW_HEAD_LEN 0.06
/* Ghost beside the character: this far along the view's right (m). */
#define GHOST_OFFSET 0.9
/* The balance overlay (m): the centre of mass's sphere, its line to the ground and the discs
 * on the ground (its projection and the planner's target, a cylinder this thin), the support
 * polygon's outline and how far above the ground it lies, the help's arrow shaft and head;
 * the polygon's fill opacity. */
#define COM_RADIUS 0.035
#define COM_LINE 0.004
#define COM_DISC 0.05
#define TARGET_DISC 0.03
#define DISC_THICK 0.002
#define SUPPORT_EDGE 0.006
#define SUPPORT_LIFT 0.004
#define HELP_SHAFT 0.012
#define HELP_HEAD 0.035
#define HELP_HEAD_LEN 0.09
#define SUPPORT_FILL_ALPHA 0.45f

typedef struct lit_uniforms {
    GLint vp, model, normal, color, light, eye, flat, sky, fog;
} lit_uniforms;

struct renderer {
    GLuint lit, grid, sky;
    lit_uniforms u;
    GLint grid_vp, grid_eye, grid_sky, grid_fog, grid_centre, sky_top, sky_horizon;
    GLint sky_f, sky_r, sky_u, sky_tan;
    GLuint vao_mesh, vbo_mesh, vao_grid, vbo_grid, vao_empty;
    int nshape;
    mesh_range* shape_mesh; /* (nshape) in the mesh buffer, body coordinates */
    mesh_range sphere, cylinder, cone, triangle;
    float (*body_color)[3]; /* (nbody) */
    int nbody;
    /* per frame */
    mat4 vp;
    fb_v3 eye, right;
    fb_v3 cam_f, cam_r, cam_u; /* view basis */
    float tan_half[2];         /* tan of the half field of view: horizontal, vertical */
    float fog[2];
};

render_flags render_default_flags(void) {
    return (render_flags){.ghost = true,
                          .ghost_offset = false,
                          .contacts = true,
                          .shadows = true,
                          .balance = true};
}

/* ---- shaders --------------------------------------------------------------------------- */

static GLuint compile(GLenum type, const char* src, char* err, size_t cap) {
    const GLuint s = glCreateShader(type);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetShaderInfoLog(s, sizeof log, NULL, log);
        snprintf(err, cap, "shader does not compile: %s", log);
        glDeleteShader(s);
        return 0;
    }
    return s;
}

GLuint glsl_program(const char* vs, const char* fs, char* err, size_t cap) {
    const GLuint v = compile(GL_VERTEX_SHADER, vs, err, cap);
    const GLuint f = v ? compile(GL_FRAGMENT_SHADER, fs, err, cap) : 0;
    if (!f) {
        glDeleteShader(v);
        return 0;
    }
    const GLuint p = glCreateProgram();
    glAttachShader(p, v);
    glAttachShader(p, f);
    glLinkProgram(p);
    glDeleteShader(v);
    glDeleteShader(f);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetProgramInfoLog(p, sizeof log, NULL, log);
        snprintf(err, cap, "shaders do not link: %s", log);
        glDeleteProgram(p);
        return 0;
    }
    return p;
}

static const char LIT_VS[] = "#version 330 core\n"
                             "layout(location = 0) in vec3 aPos;\n"
                             "layout(location = 1) in vec3 aNormal;\n"
                             "uniform mat4 uVP, uModel;\n"
                             "uniform mat3 uNormal;\n"
                             "out vec3 vNormal, vWorld;\n"
                             "void main() {\n"
                             "    vec4 w = uModel * vec4(aPos, 1.0);\n"
                             "    vWorld = w.xyz;\n"
                             "    vNormal = uNormal * aNormal;\n"
                             "    gl_Position = uVP * w;\n"
                             "}\n";

/* Lambert from one key light, a hemisphere ambient (warm from the ground, cool from the sky),
 * a faint rim so silhouettes read against the ground, and distance fog toward the horizon. */
static const char LIT_FS[] =
    "#version 330 core\n"
    "in vec3 vNormal, vWorld;\n"
    "uniform vec4 uColor;\n"
    "uniform vec3 uLight, uEye, uSky;\n"
    "uniform vec2 uFog;\n"
    "uniform int uFlat;\n"
    "out vec4 oColor;\n"
    "void main() {\n"
    "    if (uFlat != 0) { oColor = uColor; return; }\n"
    "    vec3 n = normalize(vNormal);\n"
    "    float diff = max(dot(n, uLight), 0.0);\n"
    "    vec3 amb = mix(vec3(0.34, 0.33, 0.32), vec3(0.50, 0.52, 0.55), 0.5 + 0.5 * n.y);\n"
    "    vec3 v = normalize(uEye - vWorld);\n"
    "    float rim = pow(1.0 - max(dot(n, v), 0.0), 3.0) * 0.10;\n"
    "    vec3 c = uColor.rgb * (amb + 0.62 * diff) + rim;\n"
    "    float fog = clamp((length(uEye - vWorld) - uFog.x) / (uFog.y - uFog.x), 0.0, 1.0);\n"
    "    oColor = vec4(mix(c, uSky, fog), uColor.a);\n"
    "}\n";

static const char GRID_VS[] = "#version 330 core\n"
                              "layout(location = 0) in vec2 aXZ;\n"
                              "uniform mat4 uVP;\n"
                              "uniform vec3 uCentre;\n"
                              "out vec3 vWorld;\n"
                              "void main() {\n"
                              "    vWorld = vec3(uCentre.x + aXZ.x, 0.0, uCentre.z + aXZ.y);\n"
                              "    gl_Position = uVP * vec4(vWorld, 1.0);\n"
                              "}\n";

/* Anti-aliased lines every metre and darker ones every 5 m, fading where they get denser
 * than the pixels (no moire), the two axes darker still, all grey. */
static const char GRID_FS[] =
    "#version 330 core\n"
    "in vec3 vWorld;\n"
    "uniform vec3 uEye, uSky;\n"
    "uniform vec2 uFog;\n"
    "out vec4 oColor;\n"
    "float lines(vec2 p, float width) {\n"
    "    vec2 fw = max(fwidth(p), vec2(1e-6));\n"
    "    vec2 g = abs(fract(p - 0.5) - 0.5) / fw;\n"
    "    float l = 1.0 - min(min(g.x, g.y) / width, 1.0);\n"
    "    return l * (1.0 - smoothstep(0.15, 0.5, max(fw.x, fw.y)));\n"
    "}\n"
    "void main() {\n"
    "    vec2 p = vWorld.xz;\n"
    "    vec3 c = vec3(0.80, 0.80, 0.795);\n"
    "    c = mix(c, vec3(0.69, 0.69, 0.69), lines(p, 1.0));\n"
    "    c = mix(c, vec3(0.58, 0.58, 0.585), lines(p / 5.0, 1.2));\n"
    "    vec2 fw = max(fwidth(p), vec2(1e-6));\n"
    "    vec2 ax = abs(p) / fw;\n"
    "    c = mix(c, vec3(0.50, 0.50, 0.51), 1.0 - min(min(ax.x, ax.y) / 1.5, 1.0));\n"
    "    float fog = clamp((length(uEye - vWorld) - uFog.x) / (uFog.y - uFog.x), 0.0, 1.0);\n"
    "    oColor = vec4(mix(c, uSky, fog), 1.0);\n"
    "}\n";

/* A full-screen triangle from gl_VertexID, shaded by the elevation of the view ray through
 * each pixel, so the horizon colour meets the fogged ground wherever the camera looks. */
static const char SKY_VS[] =
    "#version 330 core\n"
    "uniform vec3 uF, uR, uU;\n"
    "uniform vec2 uTan;\n"
    "out vec3 vDir;\n"
    "void main() {\n"
    "    vec2 p = vec2(gl_VertexID == 1 ? 3.0 : -1.0, gl_VertexID == 2 ? 3.0 : -1.0);\n"
    "    vDir = uF + uR * (p.x * uTan.x) + uU * (p.y * uTan.y);\n"
    "    gl_Position = vec4(p, 0.0, 1.0);\n"
    "}\n";

static const char SKY_FS[] =
    "#version 330 core\n"
    "in vec3 vDir;\n"
    "uniform vec3 uTop, uHorizon;\n"
    "out vec4 oColor;\n"
    "void main() {\n"
    "    float e = normalize(vDir).y;\n"
    "    oColor = vec4(mix(uHorizon, uTop, smoothstep(0.0, 0.45, e)), 1.0);\n"
    "}\n";

/* ---- creation -------------------------------------------------------------------------- */

/* Side of a body from its name: Left*, L + capital (CMU's LHipJoint), l_ / L_; same for right. */
static int body_side(const char* name) {
    const char* sides[2] = {"left", "right"};
    for (int s = 0; s < 2; s++) {
        const size_t n = strlen(sides[s]);
        bool word = true;
        for (size_t k = 0; k < n; k++) {
            word = word && tolower((unsigned char)name[k]) == sides[s][k];
        }
        const char c0 = (char)toupper((unsigned char)sides[s][0]);
        if (word || (name[0] == c0 && isupper((unsigned char)name[1])) ||
            (tolower((unsigned char)name[0]) == sides[s][0] && name[1] == '_')) {
            return s == 0 ? -1 : 1;
        }
    }
    return 0;
}

static bool make_meshes(renderer* r, const fb_model* m) {
    mesh_buf b = {0};
    r->nshape = m->nshape;
    r->shape_mesh = calloc((size_t)(m->nshape > 0 ? m->nshape : 1), sizeof *r->shape_mesh);
    if (!r->shape_mesh) {
        return false;
    }
    for (int s = 0; s < m->nshape; s++) {
        r->shape_mesh[s] = mesh_shape(&b, &m->shape[s]);
    }
    r->sphere = mesh_capsule(&b, v3(0, 0, 0), v3(0, 0, 0), 1.0);
    r->cylinder = mesh_cylinder(&b);
    r->cone = mesh_cone(&b);
    r->triangle = mesh_triangle(&b);
    if (b.failed) {
        mesh_buf_free(&b);
        return false;
    }
    glGenVertexArrays(1, &r->vao_mesh);
    glGenBuffers(1, &r->vbo_mesh);
    glBindVertexArray(r->vao_mesh);
    glBindBuffer(GL_ARRAY_BUFFER, r->vbo_mesh);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)b.n * MESH_FLOATS_PER_VERTEX * sizeof(float), b.v,
                 GL_STATIC_DRAW);
    const GLsizei stride = MESH_FLOATS_PER_VERTEX * sizeof(float);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, stride, (const void*)0);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, stride, (const void*)(3 * sizeof(float)));
    mesh_buf_free(&b);

    /* the ground: one quad around a centre the vertex shader moves with the camera */
    const float h = (float)GROUND_HALF;
    const float quad[8] = {-h, -h, h, -h, -h, h, h, h};
    glGenVertexArrays(1, &r->vao_grid);
    glGenBuffers(1, &r->vbo_grid);
    glBindVertexArray(r->vao_grid);
    glBindBuffer(GL_ARRAY_BUFFER, r->vbo_grid);
    glBufferData(GL_ARRAY_BUFFER, sizeof quad, quad, GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 2 * sizeof(float), (const void*)0);
    glGenVertexArrays(1, &r->vao_empty);
    glBindVertexArray(0);
    return true;
}

static bool make_programs(renderer* r, char* err, size_t cap) {
    r->lit = glsl_program(LIT_VS, LIT_FS, err, cap);
    r->grid = r->lit ? glsl_program(GRID_VS, GRID_FS, err, cap) : 0;
    r->sky = r->grid ? glsl_program(SKY_VS, SKY_FS, err, cap) : 0;
    if (!r->sky) {
        return false;
    }
    r->u = (lit_uniforms){
        glGetUniformLocation(r->lit, "uVP"),     glGetUniformLocation(r->lit, "uModel"),
        glGetUniformLocation(r->lit, "uNormal"), glGetUniformLocation(r->lit, "uColor"),
        glGetUniformLocation(r->lit, "uLight"),  glGetUniformLocation(r->lit, "uEye"),
        glGetUniformLocation(r->lit, "uFlat"),   glGetUniformLocation(r->lit, "uSky"),
        glGetUniformLocation(r->lit, "uFog")};
    r->grid_vp = glGetUniformLocation(r->grid, "uVP");
    r->grid_eye = glGetUniformLocation(r->grid, "uEye");
    r->grid_sky = glGetUniformLocation(r->grid, "uSky");
    r->grid_fog = glGetUniformLocation(r->grid, "uFog");
    r->grid_centre = glGetUniformLocation(r->grid, "uCentre");
    r->sky_top = glGetUniformLocation(r->sky, "uTop");
    r->sky_horizon = glGetUniformLocation(r->sky, "uHorizon");
    r->sky_f = glGetUniformLocation(r->sky, "uF");
    r->sky_r = glGetUniformLocation(r->sky, "uR");
    r->sky_u = glGetUniformLocation(r->sky, "uU");
    r->sky_tan = glGetUniformLocation(r->sky, "uTan");
    return true;
}

renderer* render_create(const fb_model* m, char* err, size_t cap) {
    renderer* r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    r->nbody = m->nbody;
    r->body_color = calloc((size_t)m->nbody, sizeof *r->body_color);
    if (!r->body_color || !make_meshes(r, m)) {
        snprintf(err, cap, "out of memory making meshes");
        render_destroy(r);
        return NULL;
    }
    for (int i = 0; i < m->nbody; i++) {
        const int side = body_side(m->name[i]);
        const float* c = side < 0 ? COLOR_LEFT : (side > 0 ? COLOR_RIGHT : COLOR_CENTRE);
        memcpy(r->body_color[i], c, sizeof r->body_color[i]);
    }
    if (!make_programs(r, err, cap)) {
        render_destroy(r);
        return NULL;
    }
    return r;
}

void render_destroy(renderer* r) {
    if (!r) {
        return;
    }
    glDeleteProgram(r->lit);
    glDeleteProgram(r->grid);
    glDeleteProgram(r->sky);
    const GLuint vaos[3] = {r->vao_mesh, r->vao_grid, r->vao_empty};
    const GLuint vbos[2] = {r->vbo_mesh, r->vbo_grid};
    glDeleteVertexArrays(3, vaos);
    glDeleteBuffers(2, vbos);
    free(r->shape_mesh);
    free(r->body_color);
    free(r);
}

/* ---- drawing --------------------------------------------------------------------------- */

/* uModel = [R diag(s) | p] and its normal matrix R diag(1/s) (column-major 3x3). */
static void set_model(const renderer* r, const fb_m3* R, fb_v3 p, fb_v3 s) {
    const mat4 model = mat4_from_rt(R, p, s);
    const double inv[3] = {1.0 / s.x, 1.0 / s.y, 1.0 / s.z};
    float n[9];
    for (int c = 0; c < 3; c++) {
        for (int row = 0; row < 3; row++) {
            n[c * 3 + row] = (float)(R->m[row][c] * inv[c]);
        }
    }
    glUniformMatrix4fv(r->u.model, 1, GL_FALSE, model.m);
    glUniformMatrix3fv(r->u.normal, 1, GL_FALSE, n);
}

static void draw_range(mesh_range m) {
    glDrawArrays(GL_TRIANGLES, m.first, m.count);
}

void render_begin(renderer* r, const camera* c, int w, int h) {
    const double aspect = (double)w / (h > 0 ? h : 1);
    const mat4 view = camera_view(c), proj = camera_proj(c, aspect);
    r->vp = mat4_mul(&proj, &view);
    r->eye = camera_eye(c);
    camera_basis(c, &r->cam_f, &r->cam_r, &r->cam_u);
    r->right = v3_unit(v3(r->cam_r.x, 0.0, r->cam_r.z));
    r->tan_half[1] = (float)tan(0.5 * c->fovy);
    r->tan_half[0] = (float)(r->tan_half[1] * aspect);
    /* fog starts past the subject and is complete well before the ground quad ends */
    r->fog[0] = (float)(1.6 * c->distance + 6.0);
    r->fog[1] = (float)(r->fog[0] + 45.0);
    glViewport(0, 0, w, h);
    glClearColor(SKY_HORIZON[0], SKY_HORIZON[1], SKY_HORIZON[2], 1.0f);
    glClearStencil(0);
    glDepthMask(GL_TRUE);
    glStencilMask(0xFF);
    glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT | GL_STENCIL_BUFFER_BIT);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);

    const fb_v3 L = v3_unit(v3(LIGHT_DIR[0], LIGHT_DIR[1], LIGHT_DIR[2]));
    glUseProgram(r->lit);
    glUniformMatrix4fv(r->u.vp, 1, GL_FALSE, r->vp.m);
    glUniform3f(r->u.light, (float)L.x, (float)L.y, (float)L.z);
    glUniform3f(r->u.eye, (float)r->eye.x, (float)r->eye.y, (float)r->eye.z);
    glUniform3fv(r->u.sky, 1, SKY_HORIZON);
    glUniform2fv(r->u.fog, 1, r->fog);
    glUniform1i(r->u.flat, 0);
}

void render_sky(renderer* r) {
    glDisable(GL_DEPTH_TEST);
    glDepthMask(GL_FALSE);
    glUseProgram(r->sky);
    glUniform3fv(r->sky_top, 1, SKY_TOP);
    glUniform3fv(r->sky_horizon, 1, SKY_HORIZON);
    glUniform3f(r->sky_f, (float)r->cam_f.x, (float)r->cam_f.y, (float)r->cam_f.z);
    glUniform3f(r->sky_r, (float)r->cam_r.x, (float)r->cam_r.y, (float)r->cam_r.z);
    glUniform3f(r->sky_u, (float)r->cam_u.x, (float)r->cam_u.y, (float)r->cam_u.z);
    glUniform2fv(r->sky_tan, 1, r->tan_half);
    glBindVertexArray(r->vao_empty);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glDepthMask(GL_TRUE);
}

void render_grid(renderer* r) {
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glDisable(GL_CULL_FACE); /* seen from below too */
    glUseProgram(r->grid);
    glUniformMatrix4fv(r->grid_vp, 1, GL_FALSE, r->vp.m);
    glUniform3f(r->grid_eye, (float)r->eye.x, (float)r->eye.y, (float)r->eye.z);
    glUniform3fv(r->grid_sky, 1, SKY_HORIZON);
    glUniform2fv(r->grid_fog, 1, r->fog);
    /* centred under the eye, on whole metres so the lines do not swim */
    glUniform3f(r->grid_centre, (float)floor(r->eye.x), 0.0f, (float)floor(r->eye.z));
    glBindVertexArray(r->vao_grid);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

/* Draws every shape of m at pose d moved by offset (the lit program bound). */
static void draw_shapes(const renderer* r, const fb_model* m, const fb_data* d, fb_v3 offset,
                        const float* rgba_or_null, float alpha) {
    for (int s = 0; s < m->nshape && s < r->nshape; s++) {
        const int b = m->shape[s].body;
        const fb_m3 R = fb_body_rot(m, d, b);
        const fb_v3 p = v3_add(fb_point_pos(m, d, b, v3(0, 0, 0)), offset);
        if (!rgba_or_null) {
            const float* c = r->body_color[b < r->nbody ? b : 0];
            glUniform4f(r->u.color, c[0], c[1], c[2], alpha);
        }
        set_model(r, &R, p, v3(1, 1, 1));
        draw_range(r->shape_mesh[s]);
    }
}

void render_model(renderer* r, const fb_model* m, const fb_data* d, fb_v3 offset, float alpha) {
    glUseProgram(r->lit);
    glBindVertexArray(r->vao_mesh);
    glEnable(GL_DEPTH_TEST);
    glEnable(GL_CULL_FACE);
    glCullFace(GL_BACK);
    if (alpha >= 1.0f) {
        glDepthFunc(GL_LESS);
        draw_shapes(r, m, d, offset, NULL, 1.0f);
        return;
    }
    /* A translucent ghost is drawn once per pixel: a depth-only pass marks (stencil 1) the
     * pixels where its nearest surface is in front of what is there, then colour goes only
     * to those pixels at exactly that depth, and clears the mark as it goes. Where the ghost
     * coincides with the character (clip playback) nothing is tinted. */
    glEnable(GL_STENCIL_TEST);
    glClear(GL_STENCIL_BUFFER_BIT);
    glColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_FALSE);
    glDepthFunc(GL_LESS);
    glStencilFunc(GL_ALWAYS, 1, 0xFF);
    glStencilOp(GL_KEEP, GL_KEEP, GL_REPLACE);
    draw_shapes(r, m, d, offset, NULL, 0.0f);
    glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
    glDepthFunc(GL_EQUAL);
    glDepthMask(GL_FALSE);
    glStencilFunc(GL_EQUAL, 1, 0xFF);
    glStencilOp(GL_KEEP, GL_KEEP, GL_ZERO);
    glEnable(GL_BLEND);
    glUniform4f(r->u.color, COLOR_GHOST[0], COLOR_GHOST[1], COLOR_GHOST[2], alpha);
    draw_shapes(r, m, d, offset, COLOR_GHOST, alpha);
    glDisable(GL_BLEND);
    glDepthMask(GL_TRUE);
    glDepthFunc(GL_LESS);
    glDisable(GL_STENCIL_TEST);
}

void render_shadow(renderer* r, const fb_model* m, const fb_data* d, fb_v3 offset) {
    /* Planar projection along the light onto y = SHADOW_LIFT [Blinn 1988]: x - (y - lift)/L.y L.
     * The stencil lets each pixel darken once however many shapes overlap there. */
    const fb_v3 L = v3_unit(v3(LIGHT_DIR[0], LIGHT_DIR[1], LIGHT_DIR[2]));
    const float a = (float)(L.x / L.y), c = (float)(L.z / L.y), lift = (float)SHADOW_LIFT;
    const mat4 S = {{1, 0, 0, 0, -a, 0, -c, 0, 0, 0, 1, 0, a * lift, lift, c * lift, 1}};
    const mat4 vps = mat4_mul(&r->vp, &S);
    glUseProgram(r->lit);
    glBindVertexArray(r->vao_mesh);
    glUniformMatrix4fv(r->u.vp, 1, GL_FALSE, vps.m);
    glUniform1i(r->u.flat, 1);
    glUniform4f(r->u.color, 0.0f, 0.0f, 0.0f, SHADOW_ALPHA);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LEQUAL);
    glDepthMask(GL_FALSE);
    glDisable(GL_CULL_FACE); /* the projection flips some triangles */
    glEnable(GL_BLEND);
    glEnable(GL_STENCIL_TEST);
    glClear(GL_STENCIL_BUFFER_BIT);
    glStencilFunc(GL_EQUAL, 0, 0xFF);
    glStencilOp(GL_KEEP, GL_KEEP, GL_INCR);
    draw_shapes(r, m, d, offset, COLOR_GHOST, SHADOW_ALPHA);
    glDisable(GL_STENCIL_TEST);
    glDisable(GL_BLEND);
    glDepthMask(GL_TRUE);
    glDepthFunc(GL_LESS);
    glUniform1i(r->u.flat, 0);
    glUniformMatrix4fv(r->u.vp, 1, GL_FALSE, r->vp.m);
}

void render_balls(renderer* r, const source_ball* b, int n) {
    glUseProgram(r->lit);
    glBindVertexArray(r->vao_mesh);
    glEnable(GL_DEPTH_TEST);
    glEnable(GL_CULL_FACE);
    const fb_m3 I = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    for (int k = 0; k < n; k++) {
        glUniform4fv(r->u.color, 1, b[k].rgba);
        set_model(r, &I, b[k].centre, v3(b[k].radius, b[k].radius, b[k].radius));
        draw_range(r->sphere);
    }
}

/* Rotation whose +Y column is the unit vector n. */
static fb_m3 rot_y_to(fb_v3 n) {
    const fb_v3 other = fabs(n.x) < 0.9 ? v3(1, 0, 0) : v3(0, 0, 1);
    const fb_v3 u = v3_unit(v3_cross(n, other)), w = v3_cross(u, n);
    return (fb_m3){{{u.x, n.x, w.x}, {u.y, n.y, w.y}, {u.z, n.z, w.z}}};
}

/* World point of a contact: on the plane for ground contacts, else midway between sides. */
static bool contact_point(const fb_contact* c, const fb_model* const* am, const fb_data* const* ad,
                          int nart, fb_v3* p) {
    if (c->art_a < 0 || c->art_a >= nart) {
        return false;
    }
    const fb_v3 pa = fb_point_pos(am[c->art_a], ad[c->art_a], c->body_a, c->p_a);
    if (c->art_b < 0) {
        *p = c->p_b;
    } else if (c->art_b < nart) {
        *p = v3_scale(v3_add(pa, fb_point_pos(am[c->art_b], ad[c->art_b], c->body_b, c->p_b)), 0.5);
    } else {
        return false;
    }
    return true;
}

void render_contacts(renderer* r, const fb_contact* c, const double* force, int n,
                     const fb_model* const* art_model, const fb_data* const* art_data, int nart) {
    glUseProgram(r->lit);
    glBindVertexArray(r->vao_mesh);
    glDisable(GL_DEPTH_TEST); /* seen through the feet that stand on them */
    glEnable(GL_CULL_FACE);
    const fb_m3 I = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    for (int k = 0; k < n; k++) {
        fb_v3 p;
        if (!contact_point(&c[k], art_model, art_data, nart, &p)) {
            continue;
        }
        glUniform4fv(r->u.color, 1, COLOR_CONTACT);
        set_model(r, &I, p, v3(CONTACT_RADIUS, CONTACT_RADIUS, CONTACT_RADIUS));
        draw_range(r->sphere);
        if (!force || !(force[k] > 0.0)) {
            continue;
        }
        /* the force on side A points along +n: a shaft, then a head */
        const double len = fmin(force[k] * RENDER_ARROW_M_PER_N, RENDER_ARROW_MAX);
        const double shaft = fmax(len - ARROW_HEAD_LEN, 0.0);
        const fb_m3 R = rot_y_to(v3_unit(c[k].n));
        glUniform4fv(r->u.color, 1, COLOR_ARROW);
        if (shaft > 0.0) {
            set_model(r, &R, p, v3(ARROW_SHAFT, shaft, ARROW_SHAFT));
            draw_range(r->cylinder);
        }
        set_model(r, &R, v3_add(p, v3_scale(v3_unit(c[k].n), shaft)),
                  v3(ARROW_HEAD, fmin(len, ARROW_HEAD_LEN), ARROW_HEAD));
        draw_range(r->cone);
    }
    glEnable(GL_DEPTH_TEST);
}

/* A segment from a to b as a cylinder of radius w, in the bound colour (lit program). */
static void draw_segment(const renderer* r, fb_v3 a, fb_v3 b, double w) {
    const fb_v3 d = v3_sub(b, a);
    const double len = v3_norm(d);
    if (!(len > 0.0)) {
        return;
    }
    const fb_m3 R = rot_y_to(v3_scale(d, 1.0 / len));
    set_model(r, &R, a, v3(w, len, w));
    draw_range(r->cylinder);
}

/* A flat disc of radius rad on the ground under p (a thin cylinder). */
static void draw_disc(const renderer* r, fb_v3 p, double rad) {
    const fb_m3 I = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    set_model(r, &I, v3(p.x, SUPPORT_LIFT, p.z), v3(rad, DISC_THICK, rad));
    draw_range(r->cylinder);
}

/* The support polygon on the ground: a translucent fan from its first vertex (the unit
 * triangle mapped onto each (p0, pi, pi+1): an affine, not a rigid, model matrix; flat
 * shading needs no normal), then its outline. */
static void draw_support(const renderer* r, const fb_v3* p, int n) {
    const fb_v3 lift = v3(0.0, SUPPORT_LIFT, 0.0);
    glDisable(GL_CULL_FACE);
    glEnable(GL_BLEND);
    glUniform4f(r->u.color, COLOR_SUPPORT[0], COLOR_SUPPORT[1], COLOR_SUPPORT[2],
                SUPPORT_FILL_ALPHA);
    for (int i = 1; i + 1 < n; i++) {
        const fb_v3 e1 = v3_sub(p[i], p[0]), e2 = v3_sub(p[i + 1], p[0]);
        const fb_m3 A = {{{e1.x, 0.0, e2.x}, {e1.y, 1.0, e2.y}, {e1.z, 0.0, e2.z}}};
        set_model(r, &A, v3_add(p[0], lift), v3(1, 1, 1));
        draw_range(r->triangle);
    }
    glDisable(GL_BLEND);
    glEnable(GL_CULL_FACE);
    glUniform4fv(r->u.color, 1, COLOR_SUPPORT);
    for (int i = 0; i < n; i++) {
        draw_segment(r, v3_add(p[i], lift), v3_add(p[(i + 1) % n], lift), SUPPORT_EDGE);
    }
}

void render_balance(renderer* r, const source_balance* b) {
    glUseProgram(r->lit);
    glBindVertexArray(r->vao_mesh);
    glDisable(GL_DEPTH_TEST); /* seen through the body that holds it */
    glEnable(GL_CULL_FACE);
    glUniform1i(r->u.flat, 1);
    if (b->nsupport >= 3) {
        draw_support(r, b->support, b->nsupport);
    }
    if (b->planner) {
        glUniform4fv(r->u.color, 1, COLOR_TARGET);
        draw_disc(r, b->com_target, TARGET_DISC);
    }
    glUniform4fv(r->u.color, 1, COLOR_BALANCE);
    if (b->com_known) {
        const fb_m3 I = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
        set_model(r, &I, b->com, v3(COM_RADIUS, COM_RADIUS, COM_RADIUS));
        draw_range(r->sphere);
        draw_segment(r, v3(b->com.x, SUPPORT_LIFT, b->com.z), b->com, COM_LINE);
        draw_disc(r, b->com, COM_DISC);
    }
    if (b->assist) {
        /* the helping force on the root: a shaft, then a head, along the force */
        const double len = fmin(v3_norm(b->assist_force) * RENDER_ARROW_M_PER_N, RENDER_ARROW_MAX);
        const fb_v3 u = v3_unit(b->assist_force);
        const double shaft = fmax(len - HELP_HEAD_LEN, 0.0);
        draw_segment(r, b->assist_at, v3_add(b->assist_at, v3_scale(u, shaft)), HELP_SHAFT);
        const fb_m3 R = rot_y_to(u);
        set_model(r, &R, v3_add(b->assist_at, v3_scale(u, shaft)),
                  v3(HELP_HEAD, fmin(len, HELP_HEAD_LEN), HELP_HEAD));
        draw_range(r->cone);
    }
    glUniform1i(r->u.flat, 0);
    glEnable(GL_DEPTH_TEST);
}

void render_frame(renderer* r, const camera* c, int w, int h, const source_view* v,
                  const render_flags* f) {
    render_begin(r, c, w, h);
    render_sky(r);
    render_grid(r);
    if (f->shadows) {
        render_shadow(r, v->model, v->data, v3(0, 0, 0));
    }
    render_model(r, v->model, v->data, v3(0, 0, 0), 1.0f);
    render_balls(r, v->ball, v->nball);
    if (f->ghost && v->ghost) {
        const fb_v3 off = f->ghost_offset ? v3_scale(r->right, GHOST_OFFSET) : v3(0, 0, 0);
        if (f->ghost_offset && f->shadows) {
            render_shadow(r, v->model, v->ghost, off);
        }
        render_model(r, v->model, v->ghost, off, 0.38f);
    }
    if (f->balance) { /* under the contact dots, which mark the support polygon's corners */
        render_balance(r, &v->balance);
    }
    if (f->contacts) {
        render_contacts(r, v->contact, v->contact_force, v->ncontact, v->art_model, v->art_data,
                        v->nart);
    }
    glBindVertexArray(0);
    glUseProgram(0);
}
