/* Stand-in for the subset of libpng that the Mandelbrot programs use (written for this
 * check, not part of any fetched repository). It writes the image as a binary PPM (P6:
 * header + the RGB rows as given), so that the result can be checksummed quickly and
 * identically on every machine, with or without libpng installed. */
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
typedef unsigned char png_byte;
typedef png_byte *png_bytep;
typedef struct dpcheck_png_struct { FILE *fp; unsigned long w, h; jmp_buf jb; } png_struct;
typedef png_struct *png_structp;
typedef struct dpcheck_png_info { int unused; } png_info;
typedef png_info *png_infop;
typedef png_infop *png_infopp;
typedef struct dpcheck_png_text { int compression; char *key; char *text; } png_text;
#define PNG_LIBPNG_VER_STRING "dpcheck-stand-in"
#define PNG_COLOR_TYPE_RGB 2
#define PNG_INTERLACE_NONE 0
#define PNG_COMPRESSION_TYPE_BASE 0
#define PNG_FILTER_TYPE_BASE 0
#define PNG_TEXT_COMPRESSION_NONE -1
#define PNG_FREE_ALL 0x7fff
#define png_jmpbuf(p) ((p)->jb)
static inline png_structp png_create_write_struct(const char *, void *, void *, void *) {
    return (png_structp)calloc(1, sizeof(png_struct));
}
static inline png_infop png_create_info_struct(png_structp) { return (png_infop)calloc(1, sizeof(png_info)); }
static inline void png_init_io(png_structp p, FILE *fp) { p->fp = fp; }
static inline void png_set_IHDR(png_structp p, png_infop, unsigned long w, unsigned long h, int, int, int, int, int) {
    p->w = w; p->h = h;
}
static inline void png_set_text(png_structp, png_infop, png_text *, int) {}
static inline void png_write_info(png_structp p, png_infop) { fprintf(p->fp, "P6\n%lu %lu\n255\n", p->w, p->h); }
static inline void png_write_row(png_structp p, png_bytep row) { fwrite(row, 3, p->w, p->fp); }
static inline void png_write_end(png_structp, png_infop) {}
static inline void png_free_data(png_structp, png_infop i, int, int) { free(i); }
static inline void png_destroy_write_struct(png_structp *pp, png_infopp) { free(*pp); *pp = 0; }
