/* featherbone-view: off-screen frames and PNG output. */
#define _POSIX_C_SOURCE 200809L
#include "shot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stb_image_write.h>

/* Multisamples asked for: smooth edges at a cost llvmpipe affords. */
#define OFFSCREEN_SAMPLES 4

bool offscreen_create(offscreen* o, int w, int h, char* err, size_t cap) {
    memset(o, 0, sizeof *o);
    GLint max_size = 0, max_samples = 0;
    glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &max_size);
    glGetIntegerv(GL_MAX_SAMPLES, &max_samples);
    if (w > max_size || h > max_size) {
        snprintf(err, cap, "--size %dx%d: this OpenGL draws at most %d pixels a side", w, h,
                 max_size);
        return false;
    }
    o->w = w;
    o->h = h;
    o->samples = max_samples < OFFSCREEN_SAMPLES ? max_samples : OFFSCREEN_SAMPLES;
    o->pixels = malloc((size_t)w * (size_t)h * 4);
    if (!o->pixels) {
        snprintf(err, cap, "out of memory for a %dx%d image", w, h);
        return false;
    }
    /* drawn into: colour + depth/stencil, multisampled */
    glGenFramebuffers(1, &o->fbo_ms);
    glGenRenderbuffers(1, &o->color_ms);
    glGenRenderbuffers(1, &o->depth_ms);
    glBindFramebuffer(GL_FRAMEBUFFER, o->fbo_ms);
    glBindRenderbuffer(GL_RENDERBUFFER, o->color_ms);
    glRenderbufferStorageMultisample(GL_RENDERBUFFER, o->samples, GL_RGBA8, w, h);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, o->color_ms);
    glBindRenderbuffer(GL_RENDERBUFFER, o->depth_ms);
    glRenderbufferStorageMultisample(GL_RENDERBUFFER, o->samples, GL_DEPTH24_STENCIL8, w, h);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_STENCIL_ATTACHMENT, GL_RENDERBUFFER,
                              o->depth_ms);
    const GLenum st_ms = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    /* resolved into and read from: colour only */
    glGenFramebuffers(1, &o->fbo);
    glGenRenderbuffers(1, &o->color);
    glBindFramebuffer(GL_FRAMEBUFFER, o->fbo);
    glBindRenderbuffer(GL_RENDERBUFFER, o->color);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, o->color);
    const GLenum st = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (st_ms != GL_FRAMEBUFFER_COMPLETE || st != GL_FRAMEBUFFER_COMPLETE) {
        snprintf(err, cap, "off-screen framebuffer incomplete (0x%x, 0x%x)", st_ms, st);
        offscreen_destroy(o);
        return false;
    }
    return true;
}

void offscreen_destroy(offscreen* o) {
    const GLuint fbos[2] = {o->fbo_ms, o->fbo};
    const GLuint rbs[3] = {o->color_ms, o->depth_ms, o->color};
    glDeleteFramebuffers(2, fbos);
    glDeleteRenderbuffers(3, rbs);
    free(o->pixels);
    memset(o, 0, sizeof *o);
}

void offscreen_bind(const offscreen* o) {
    glBindFramebuffer(GL_FRAMEBUFFER, o->fbo_ms);
}

void offscreen_read(offscreen* o) {
    glBindFramebuffer(GL_READ_FRAMEBUFFER, o->fbo_ms);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, o->fbo);
    glBlitFramebuffer(0, 0, o->w, o->h, 0, 0, o->w, o->h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
    glBindFramebuffer(GL_FRAMEBUFFER, o->fbo);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, o->w, o->h, GL_RGBA, GL_UNSIGNED_BYTE, o->pixels);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    /* blending leaves alpha below 1 where translucent things were drawn; the image is opaque */
    const size_t row = (size_t)o->w * 4;
    for (size_t k = 3; k < row * (size_t)o->h; k += 4) {
        o->pixels[k] = 255;
    }
    /* GL's rows run bottom-up, PNG's top-down: swap row r with row h-1-r in place */
    for (int r = 0; r < o->h / 2; r++) {
        unsigned char* a = o->pixels + (size_t)r * row;
        unsigned char* b = o->pixels + (size_t)(o->h - 1 - r) * row;
        for (size_t k = 0; k < row; k++) {
            const unsigned char t = a[k];
            a[k] = b[k];
            b[k] = t;
        }
    }
}

bool png_write_atomic(const char* path, const unsigned char* rgba, int w, int h, char* err,
                      size_t cap) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        snprintf(err, cap, "%s: path too long", path);
        return false;
    }
    /* every pixel is opaque; stb writes 4 channels as they are */
    if (!stbi_write_png(tmp, w, h, 4, rgba, w * 4)) {
        snprintf(err, cap, "%s: cannot write the image (directory missing or not writable?)", path);
        remove(tmp);
        return false;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, cap, "%s: cannot rename the finished image into place: %s", path,
                 strerror(errno));
        remove(tmp);
        return false;
    }
    return true;
}
