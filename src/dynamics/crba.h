/* Joint-space inertia from the current kinematics and its branch-induced sparse factorisation
 * M = L^T L [RBDA §6.2-6.5]: what the constraint system uses to build K = J M^-1 J^T without
 * one test force per row (src/constraint/k_factor.c), and its joint-space solve
 * (src/constraint/joint_space.c). */
#ifndef FB_DYNAMICS_CRBA_H
#define FB_DYNAMICS_CRBA_H

#include <stdbool.h>

#include "featherbone/data.h"

/* The dof tree [RBDA §6.5]: the parent lambda(k) of dof k is the previous dof of its own
 * joint, or the last dof of the nearest ancestor body that has any; -1 at the root, and
 * lambda(k) < k. Its chains: chain k lists the ancestors of dof k and k itself, root first,
 * len[k] of them from chain + off[k]; the chain of an ancestor of k is a prefix of k's, and
 * dof k sits at position len[k] - 1 of its own. A matrix with the tree's sparsity (the factor
 * L of M) is kept compressed the same way: row k as its values at the columns of its chain,
 * from off[k]. */
typedef struct fb_dof_tree {
    int n;       /* dofs */
    int* lambda; /* (n) */
    int* len;    /* (n) */
    int* off;    /* (n) */
    int* chain;  /* (size) */
    int size;    /* sum of len */
} fb_dof_tree;

/* The size of m's dof tree (entries of the chains, and of a compressed matrix). */
int fb_dof_tree_size(const fb_model* m);

/* Fills t, whose arrays the caller allocated (lambda, len, off: nv; chain: the size). */
void fb_dof_tree_init(const fb_model* m, fb_dof_tree* t);

/* Sets dof k of a tree being filled in order (dofs 0..k-1 set, *off entries of chain used):
 * its parent (-1 or < k), its chain (the parent's and k), and advances *off. */
void fb_dof_tree_set(fb_dof_tree* t, int k, int parent, int* off);

/* M + h B (nv x nv, row-major) from the position kinematics already in d (FB_STAGE_POS), with
 * h = d->damping_dt and B the joints' damping, so that it is the matrix ABA inverts when
 * damping is implicit. Only entries (i, j) with i, j on one chain of the dof tree are
 * non-zero; both triangles are written. Uses d->IC and d->F. */
void fb_crba_matrix(const fb_model* m, fb_data* d, double* M);

/* y = (M + h B) x (nv values each; y must not alias x) from the position kinematics in d
 * (FB_STAGE_POS), h = d->damping_dt, without forming M: the recursion of inverse dynamics with
 * no velocity and no gravity (RNEA, RBDA Table 5.1). Uses d->da and d->dpA as scratch. */
void fb_inertia_mul(const fb_model* m, fb_data* d, const double* x, double* y);

/* M = L^T L (LTL, RBDA Table 6.3) for the dense M (n x n) with the tree's sparsity: L, lower
 * triangular with L_kj != 0 only for j on k's chain, into Lc in compressed form. Returns
 * false at a pivot that is not positive. */
bool fb_ltl_factor(const fb_dof_tree* t, const double* M, double* Lc);

/* x <- M^-1 x = L^-1 L^-T x (n values) with Lc from fb_ltl_factor. The first half touches only
 * the ancestors of x's non-zero entries. */
void fb_ltl_solve(const fb_dof_tree* t, const double* Lc, double* x);

/* fb_ltl_solve on m right-hand sides at once (xs[j], n values each), each given the same
 * operations in the same order (the same bits): a solve is a chain of dependent divisions
 * down the tree, and chains of different right-hand sides overlap when taken together. */
void fb_ltl_solve_many(const fb_dof_tree* t, const double* Lc, double* const* xs, int m);

#endif /* FB_DYNAMICS_CRBA_H */
