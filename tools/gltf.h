/* featherbone simulate --format gltf: the simulated character and the balls as an animated
 * glTF 2.0 file, written through Assimp's exporter. */
#ifndef FB_TOOLS_GLTF_H
#define FB_TOOLS_GLTF_H

#include "featherbone/featherbone.h"

/* Writes the character (one node per body, in the model's tree, with a mesh for each body's
 * shapes: capsules, boxes, spheres triangulated coarsely) and the balls (one node each with a
 * sphere mesh) as an animated glTF 2.0 file through Assimp's exporter: one animation with a
 * translation and rotation key per frame for every body (local transform relative to its
 * parent node) and a translation key per frame for each ball. The file appears whole or not
 * at all (write to a temporary name in the same directory, then rename). Errors: FB_EIO with
 * the path and Assimp's message.
 *
 * Layout: the root node is the world body (body 0, fixed, no channel); bodies 1..nbody-1 hang
 * below it as the model's tree, each ball is a child of the root, named "ball<k>" (with '_'
 * appended while that is a body's name). Node count nbody + nball, channel count
 * nbody - 1 + nball. Meshes are in body coordinates (balls: centred on the node), without
 * normals or materials (viewers shade them flat with glTF's default material). Key k is at
 * time k * mo->dt; every node also rests at its frame-0 pose for viewers without animation.
 * The file is self-contained: Assimp's binary buffer is embedded as a base64 data URI instead of
 * a .bin beside it, so one rename publishes all of it. Values are stored as float (glTF).
 *
 * mo->q (nframe x nq) is the model's configuration per frame; body poses come from
 * fb_kinematics_pos on a private fb_data. ball_radius (nball) in m; ball_pos is
 * (nframe x nball x 3), world coordinates, m; both may be NULL when nball is 0.
 * Errors: FB_EINVAL (motion not of this model, nframe < 1, dt not positive, a radius not
 * positive, a non-finite position or pose; the message names frame and body or ball),
 * FB_ESTATE (model not finalized), FB_ENOMEM, FB_EIO (the exporter failed or the file could not
 * be written: the message names the path and the reason; Assimp's C API does not pass on the
 * exporter's own error text, so when the exporter itself fails the message says so). */
fb_status gltf_write(const char* path, const fb_model* m, const fb_motion* mo, int nball,
                     const double* ball_radius, const double* ball_pos, fb_error* err);

#endif /* FB_TOOLS_GLTF_H */
