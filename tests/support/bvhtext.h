/* BVH read by the tests from its text, and its forward kinematics, written here with plain
 * 3x3 matrices: nothing of the library's parser, Euler code or kinematics, so that what
 * `featherbone simulate` writes is judged independently of how it was made. */
#ifndef FB_TEST_BVHTEXT_H
#define FB_TEST_BVHTEXT_H

#include <stdbool.h>

#define CK_BVH_MAX_JOINTS 128

typedef struct ck_bvh_joint {
    char name[64];
    int parent;    /* -1 for the root */
    bool end;      /* an End Site: no channels, not a joint */
    double offset[3];
    int nchan;
    char chan[6];  /* 'X', 'Y', 'Z' rotations; 'x', 'y', 'z' positions */
    int col;       /* its first value in a frame line */
} ck_bvh_joint;

typedef struct ck_bvh {
    int njoint;    /* joints and End Sites, in file order (a parent before its children) */
    ck_bvh_joint joint[CK_BVH_MAX_JOINTS];
    int nchan;
    int declared;  /* "Frames:" */
    int nframe;    /* complete frame lines */
    double frame_time;
    double* v;     /* (nframe x nchan), malloc'd */
} ck_bvh;

/* Reads a BVH file: hierarchy, offsets, channel orders and every complete frame line. Fails
 * the test on a file it cannot read. */
void ck_bvh_read(const char* path, ck_bvh* b);

/* Frees what ck_bvh_read allocated. */
void ck_bvh_free(ck_bvh* b);

/* The joint (or End Site) named `name`, or -1. */
int ck_bvh_find(const ck_bvh* b, const char* name);

/* World positions (file units) and rotations (R row-major, joint axes -> world; may be NULL)
 * of every joint and End Site at frame f: each joint's frame is its parent's, moved by OFFSET
 * plus its position channels and turned by its rotation channels in the file's order
 * (intrinsic: R = R_1 R_2 R_3). */
void ck_bvh_pose(const ck_bvh* b, int f, double (*p)[3], double (*R)[9]);

/* The rotation of joint i at frame f relative to its parent (its rotation channels composed
 * in file order), row-major. */
void ck_bvh_local_rotation(const ck_bvh* b, int i, int f, double Rl[9]);

#endif /* FB_TEST_BVHTEXT_H */
