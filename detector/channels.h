/* channels.h: the crystal's shape in channels (6 sectors x 6 rings = 36 segments, the core, 37 channels), defined once for every C source and every CUDA source. */
#ifndef NARWHAL_DET_CHANNELS_H
#define NARWHAL_DET_CHANNELS_H

/* segment = DET_RINGS * sector + ring (AGATA's numbering, adf.h's data:crystal);
 * channel DET_CORE, after the segments, is the core.  geometry.h says where
 * sectors and rings lie. */
enum {
    DET_SECTORS = 6,
    DET_RINGS = 6,
    DET_SEGMENTS = 36,
    DET_CORE = 36,
    DET_CHANNELS = 37,
};

#ifdef __cplusplus
static_assert(DET_SEGMENTS == DET_SECTORS * DET_RINGS && DET_CORE == DET_SEGMENTS &&
                  DET_CHANNELS == DET_SEGMENTS + 1,
              "segments are sectors x rings, the core follows them");
#else
_Static_assert(DET_SEGMENTS == DET_SECTORS * DET_RINGS && DET_CORE == DET_SEGMENTS &&
                   DET_CHANNELS == DET_SEGMENTS + 1,
               "segments are sectors x rings, the core follows them");
#endif

#endif
