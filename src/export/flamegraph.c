/* SPDX-License-Identifier: MIT */
/*
 * flamegraph.c - `trail export --format flamegraph`: the call stacks of a
 * function_graph recording (stacks.c) drawn as a flame graph, one SVG file
 * that needs nothing else: it opens in a browser, with its script inline.
 *
 *   - a frame per distinct stack, its width its time with everything it
 *     called (--count: its calls with theirs), children from the left in
 *     name order, the root ("all") at the bottom, then the processes and
 *     threads (grey), then the functions
 *   - colour by the object a function is in (the program in reds, each
 *     library in a hue of its own, a legend of the largest); a function
 *     whose object is not known by the hash of its name's prefix
 *     (namespace, or what comes before its first '_')
 *   - a tooltip per frame (<title>): name, time, share, calls, self time,
 *     object; a line at the bottom says the same on hover
 *   - click a frame to zoom into it (its callers stay below it, full
 *     width); "Reset zoom" or Escape goes back
 *   - "Search" (or Ctrl-F, or '/') asks for a regular expression (a plain
 *     substring if it is not one): matching frames turn magenta and the
 *     share of the whole they cover is shown; a URL ending ?s=TEXT
 *     searches at load. Escape clears it.
 *
 * Frames narrower than MIN_PX at full width are left out, with what
 * they called: a flame graph of a big program stays a few thousand frames
 * (zooming cannot show them; a --graph-func or --tid selection can).
 * Positions are written in the file, so a viewer without scripts still
 * shows the graph; the script reads them back for zoom and search.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "formats.h"
#include "lbuf.h"
#include "stacks.h"

#define IMG_W 1200
#define PAD 10         /* left and right */
#define FRAME_H 16
#define TOP 64         /* title, subtitle, buttons */
#define BOTTOM 44      /* legend, details line */
#define CHAR_W 7.0     /* average width of a character of the 12px font */
#define STR_(x) #x
#define STR(x) STR_(x)
#define MIN_PX 0.1
#define LEGEND_MAX 8

struct object {
	const char *path;
	uint64_t v;   /* the value of the calls in it, self */
	int program;  /* a traced program, not a library */
	int rank;     /* libraries: by value, 0 first */
};

struct flame {
	struct trail_stacks_output so; /* first: the output, the stacks */
	FILE *f;
	int count;
	const char *title;
	const struct trail_export_src *src;
	const struct trail_snode *nodes;
	uint64_t *x;       /* by depth: where the next frame starts (value) */
	size_t nx;
	double scale;      /* pixels per unit of value */
	uint64_t min;      /* frames below this value are left out */
	uint32_t maxdepth; /* of the frames drawn */
	uint32_t frames;
	double height;     /* of the image */
	struct object *objs; /* the objects functions are in, most first */
	size_t nobjs;
};

/* ---- text ---- */

/* The length of the UTF-8 sequence at s (NUL-terminated, s[0] >= 0x80)
 * that XML accepts (well formed, and not U+FFFE or U+FFFF), or 0. */
static size_t utf8_len(const unsigned char *s)
{
	int ok;
	size_t n = trail__utf8_seq(s, 4, &ok);

	if (!ok || (s[0] == 0xef && s[1] == 0xbf && (s[2] == 0xbe || s[2] == 0xbf)))
		return 0;
	return n;
}

/* s as XML character data: markup escaped, control bytes and bytes that
 * are not UTF-8 shown as '?' (XML forbids the first, the second would make
 * the file unreadable). At most max characters, then "..". */
static void xml_text(struct lbuf *l, const char *s, size_t max)
{
	for (size_t chars = 0; *s; chars++) {
		unsigned char c = (unsigned char)*s;
		size_t n = c >= 0x80 ? utf8_len((const unsigned char *)s) : 0;

		if (chars == max) {
			lb_put(l, "..", 2);
			return;
		}
		if (n) {
			lb_put(l, s, n);
			s += n;
			continue;
		}
		s++;
		if (c == '&')
			lb_put(l, "&amp;", 5);
		else if (c == '<')
			lb_put(l, "&lt;", 4);
		else if (c == '>')
			lb_put(l, "&gt;", 4);
		else if (c == '"')
			lb_put(l, "&quot;", 6);
		else if (c < ' ' || c >= 0x7f)
			lb_put(l, "?", 1);
		else
			lb_put(l, (const char *)&c, 1);
	}
}

/* characters of a string as xml_text() counts them */
static size_t chars_of(const char *s)
{
	size_t n = 0;

	for (; *s; n++) {
		size_t k = (unsigned char)*s >= 0x80 ? utf8_len((const unsigned char *)s) : 0;

		s += k ? k : 1;
	}
	return n;
}

static void lb_fmt(struct lbuf *l, const char *fmt, double v)
{
	char b[256];
	int n = snprintf(b, sizeof(b), fmt, v);

	if (n > 0)
		lb_put(l, b, (size_t)n < sizeof(b) ? (size_t)n : sizeof(b) - 1);
}

/* a duration for people: 870 ns, 12.4 us, 3.05 ms, 1.234 s */
static void lb_time(struct lbuf *l, uint64_t ns)
{
	if (ns < 1000) {
		lb_num(l, ns, 0, ' ');
		lb_put(l, " ns", 3);
	} else if (ns < 1000000) {
		lb_fmt(l, "%.2f us", (double)ns / 1e3);
	} else if (ns < 1000000000) {
		lb_fmt(l, "%.2f ms", (double)ns / 1e6);
	} else {
		lb_fmt(l, "%.3f s", (double)ns / 1e9);
	}
}

/* ---- colour ---- */

struct rgb {
	int r, g, b;
};

static uint32_t hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h ^ (h >> 15);
}

/* h in degrees, s and l in [0, 1] */
static struct rgb hsl(double h, double s, double l)
{
	double c = (1 - (2 * l - 1 < 0 ? 1 - 2 * l : 2 * l - 1)) * s, hp, t, x, m;
	int sector;

	while (h < 0)
		h += 360;
	while (h >= 360)
		h -= 360;
	hp = h / 60; /* the sector of the colour wheel, and where in it */
	sector = (int)hp;
	t = hp - 2 * (sector / 2) - 1;
	x = c * (1 - (t < 0 ? -t : t));
	m = l - c / 2;
	{
		const double v[6][3] = {{c, x, 0}, {x, c, 0}, {0, c, x},
					{0, x, c}, {x, 0, c}, {c, 0, x}};
		const double *p = v[sector % 6];

		return (struct rgb){(int)((p[0] + m) * 255 + 0.5), (int)((p[1] + m) * 255 + 0.5),
				    (int)((p[2] + m) * 255 + 0.5)};
	}
}

static void lb_rgb(struct lbuf *l, struct rgb c)
{
	lb_put(l, "rgb(", 4);
	lb_num(l, (unsigned)c.r, 0, ' ');
	lb_put(l, ",", 1);
	lb_num(l, (unsigned)c.g, 0, ' ');
	lb_put(l, ",", 1);
	lb_num(l, (unsigned)c.b, 0, ' ');
	lb_put(l, ")", 1);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Is this object a traced program, not a library? (A process's exe is
 * not always in the file: shared objects are named *.so*.) */
static int is_program(const struct trail_export_src *src, const char *module)
{
	for (size_t i = 0; i < src->nprocs; i++)
		if (src->procs[i].exe && *src->procs[i].exe &&
		    !strcmp(base_name(src->procs[i].exe), base_name(module)))
			return 1;
	return !strstr(base_name(module), ".so");
}

/* Library hues, apart from the program's reds and from each other. */
static const int lib_hue[] = {205, 95, 48, 265, 175, 310, 130, 30};

/* An object's colour: the program's red, a library's hue by its rank (the
 * largest get hues apart); vary: a hash of the function's name, to tell
 * neighbours apart (0: the object's own colour, for the legend). */
static struct rgb object_colour(const struct object *ob, uint32_t vary)
{
	double dv = vary ? (double)(vary % 1000) / 1000 - 0.5 : 0;

	if (ob->program)
		return hsl(10 + 14 * dv, 0.78, 0.60 + 0.08 * dv);
	return hsl(lib_hue[ob->rank % (int)(sizeof(lib_hue) / sizeof(lib_hue[0]))] + 10 * dv, 0.60,
		   0.66 + 0.08 * dv);
}

static const struct object *object_of(const struct flame *o, const char *path)
{
	for (size_t i = 0; i < o->nobjs; i++)
		if (o->objs[i].path == path || !strcmp(o->objs[i].path, path))
			return &o->objs[i];
	return NULL;
}

/* A name's namespace: before its last "::" (ahead of any parameter list),
 * else before its first '_' past the first character, else all of it. */
static size_t prefix_len(const char *name)
{
	const char *paren = strchr(name, '(');
	size_t n = paren ? (size_t)(paren - name) : strlen(name);
	const char *u;

	for (size_t i = n; i-- > 1;)
		if (name[i] == ':' && name[i - 1] == ':')
			return i - 1;
	u = memchr(name + 1, '_', n > 1 ? n - 1 : 0);
	return u ? (size_t)(u - name) : n;
}

static struct rgb colour(const struct flame *o, const struct trail_sname *nm)
{
	uint32_t h = hash(nm->text, strlen(nm->text));

	switch (nm->kind) {
	case TRAIL_SNAME_FUNC:
		break;
	case TRAIL_SNAME_HANDLER:
		return (struct rgb){214, 196, 222};
	default: {
		int g = nm->kind == TRAIL_SNAME_ROOT ? 190 : 200 + (int)(h % 24);

		return (struct rgb){g, g, g + 6};
	}
	}
	if (nm->module && object_of(o, nm->module))
		return object_colour(object_of(o, nm->module), h | 1);
	/* unknown object: warm and pale, by the name's prefix */
	return hsl((double)(hash(nm->text, prefix_len(nm->text)) % 55), 0.55,
		   0.72 + 0.06 * ((double)(h % 1000) / 1000 - 0.5));
}

/* ---- layout ---- */

static uint64_t value(const struct flame *o, const struct trail_snode *n)
{
	return o->count ? n->total_calls : n->total_ns;
}

/*
 * Every frame drawn, in depth-first order, with its position: x in units
 * of value from the left (by depth, where its parent started plus its
 * siblings before it). fn NULL: only finds the depth and count of frames.
 */
static int walk(struct flame *o, int (*fn)(struct flame *, uint32_t, uint64_t))
{
	const struct trail_snode *nodes = o->nodes;
	uint32_t i = 0;
	int rc;

	o->maxdepth = 0;
	o->frames = 0;
	o->x[0] = 0;
	while (1) {
		const struct trail_snode *n = &nodes[i];
		uint64_t x = o->x[n->depth];
		int drawn = !i || (value(o, n) && value(o, n) >= o->min);

		o->x[n->depth] += value(o, n);
		if (drawn) {
			if (n->depth + 1 >= o->nx) {
				size_t cap = o->nx * 2;
				uint64_t *v = realloc(o->x, cap * sizeof(*v));

				if (!v)
					return -ENOMEM;
				o->x = v;
				o->nx = cap;
			}
			o->x[n->depth + 1] = x;
			if (n->depth > o->maxdepth)
				o->maxdepth = n->depth;
			o->frames++;
			if (fn && (rc = fn(o, i, x)))
				return rc;
		}
		i = trail__stacks_next(nodes, i, drawn);
		if (!i)
			return 0;
	}
}

/* One frame: <g><title/><rect/>[<text/>]</g> */
static int frame(struct flame *o, uint32_t i, uint64_t xv)
{
	const struct trail_snode *n = &o->nodes[i], *root = &o->nodes[0];
	const struct trail_sname *nm = trail__stacks_name(o->so.s, n->name);
	double x = PAD + (double)xv * o->scale, w = (double)value(o, n) * o->scale;
	double y = o->height - BOTTOM - (n->depth + 1.0) * FRAME_H;
	double share = value(o, root) ? 100.0 * (double)value(o, n) / (double)value(o, root) : 0;
	struct rgb c = colour(o, nm);
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
	struct lbuf l;

	lb_init(&l, o->f);
	lb_put(&l, "<g><title>", 10);
	xml_text(&l, nm->text, SIZE_MAX);
	lb_put(&l, "\n", 1);
	if (o->count) {
		lb_num(&l, n->total_calls, 0, ' ');
		lb_fmt(&l, " calls (%.2f%%)", share);
		if (nm->kind == TRAIL_SNAME_FUNC) {
			lb_put(&l, ", ", 2);
			lb_num(&l, n->calls, 0, ' ');
			lb_put(&l, " of them its own", 16);
		}
	} else {
		lb_time(&l, n->total_ns);
		lb_fmt(&l, " (%.2f%%), ", share);
		lb_num(&l, n->total_calls, 0, ' ');
		lb_put(&l, n->total_calls == 1 ? " call" : " calls", n->total_calls == 1 ? 5 : 6);
		if (nm->kind == TRAIL_SNAME_FUNC) {
			lb_put(&l, "\nself ", 6);
			lb_time(&l, n->self_ns);
			lb_put(&l, " in ", 4);
			lb_num(&l, n->calls, 0, ' ');
			lb_put(&l, n->calls == 1 ? " call" : " calls", n->calls == 1 ? 5 : 6);
		}
	}
	if (nm->module) {
		lb_put(&l, "\n", 1);
		xml_text(&l, nm->module, SIZE_MAX);
	}
	lb_fmt(&l, "</title><rect x=\"%.2f\"", x);
	lb_fmt(&l, " y=\"%.0f\"", y);
	lb_fmt(&l, " width=\"%.2f\" height=\"15\" fill=\"", w);
	lb_rgb(&l, c);
	lb_put(&l, "\"/>", 3);
	if (fit >= 3) {
		lb_fmt(&l, "<text x=\"%.2f\"", x + 3);
		lb_fmt(&l, " y=\"%.1f\">", y + 11.5);
		xml_text(&l, nm->text, chars_of(nm->text) > fit ? fit - 2 : SIZE_MAX);
		lb_put(&l, "</text>", 7);
	}
	lb_put(&l, "</g>", 4);
	lb_end(&l);
	return 0;
}

/* ---- the file ---- */

static const char style[] =
	"<style>\n"
	"text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
	"#title { font-size: 17px; text-anchor: middle; }\n"
	"#subtitle { text-anchor: middle; fill: #555; }\n"
	"#frames g { cursor: pointer; }\n"
	"#frames g:hover rect { stroke: #000; stroke-width: 0.6; }\n"
	"#frames text { pointer-events: none; }\n"
	"#frames .anc rect { opacity: 0.55; }\n"
	".btn { cursor: pointer; fill: #1a4a8a; }\n"
	".btn:hover { text-decoration: underline; }\n"
	".off { display: none; }\n"
	"#legend text { font-size: 11px; fill: #333; }\n"
	"</style>\n";

/*
 * The script: frames are read back from the file (rect x/width are their
 * place at full width, the <title>'s first line the name), zoom rewrites
 * x/width and labels, search recolours. window.trailFlame is for tests and
 * consoles: search(text) -> {frames, percent}, zoom(i), reset(),
 * frames (their count).
 */
static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"\"use strict\";\n"
	"(function () {\n"
	"var HL = \"rgb(230,0,230)\", EPS = 0.02, CHAR_W = " STR(CHAR_W) ";\n"
	"var $ = function (id) { return document.getElementById(id); };\n"
	"var frames = [], zoomed = null, term = null;\n"
	"var gs = $(\"frames\").getElementsByTagName(\"g\");\n"
	"for (var i = 0; i < gs.length; i++) {\n"
	"\tvar g = gs[i], r = g.getElementsByTagName(\"rect\")[0];\n"
	"\tvar tt = g.getElementsByTagName(\"title\")[0].textContent;\n"
	"\tvar nl = tt.indexOf(\"\\n\");\n"
	"\tg.setAttribute(\"data-i\", i);\n"
	"\tframes.push({g: g, r: r, t: g.getElementsByTagName(\"text\")[0] || null,\n"
	"\t\tname: nl < 0 ? tt : tt.substring(0, nl), info: tt.replace(/\\n/g, \", \"),\n"
	"\t\tx: +r.getAttribute(\"x\"), w: +r.getAttribute(\"width\"),\n"
	"\t\ty: +r.getAttribute(\"y\"), fill: r.getAttribute(\"fill\")});\n"
	"}\n"
	"var root = frames[0];\n"
	"function label(f, x, w) {\n"
	"\tvar fit = Math.floor((w - 6) / CHAR_W), s = f.name;\n"
	"\tif (fit < 3) s = \"\";\n"
	"\telse if (s.length > fit) s = s.substring(0, fit - 2) + \"..\";\n"
	"\tif (!f.t) {\n"
	"\t\tif (!s) return;\n"
	"\t\tf.t = document.createElementNS(\"http://www.w3.org/2000/svg\", \"text\");\n"
	"\t\tf.t.setAttribute(\"y\", (f.y + 11.5).toFixed(1));\n"
	"\t\tf.g.appendChild(f.t);\n"
	"\t}\n"
	"\tf.t.setAttribute(\"x\", (x + 3).toFixed(2));\n"
	"\tf.t.textContent = s;\n"
	"}\n"
	"function place(f, x, w, cls) {\n"
	"\tf.r.setAttribute(\"x\", x.toFixed(2));\n"
	"\tf.r.setAttribute(\"width\", w.toFixed(2));\n"
	"\tf.g.setAttribute(\"class\", cls);\n"
	"\tlabel(f, x, w);\n"
	"}\n"
	"function zoom(z) {\n"
	"\tvar k = root.w / z.w;\n"
	"\tzoomed = z;\n"
	"\tframes.forEach(function (f) {\n"
	"\t\tif (f.y >= z.y && f.x <= z.x + EPS && f.x + f.w >= z.x + z.w - EPS)\n"
	"\t\t\tplace(f, root.x, root.w, f === z ? \"\" : \"anc\");\n"
	"\t\telse if (f.y < z.y && f.x >= z.x - EPS && f.x + f.w <= z.x + z.w + EPS)\n"
	"\t\t\tplace(f, root.x + (f.x - z.x) * k, f.w * k, \"\");\n"
	"\t\telse\n"
	"\t\t\tf.g.setAttribute(\"class\", \"off\");\n"
	"\t});\n"
	"\t$(\"unzoom\").setAttribute(\"class\", \"btn\");\n"
	"}\n"
	"function reset() {\n"
	"\tzoomed = null;\n"
	"\tframes.forEach(function (f) { place(f, f.x, f.w, \"\"); });\n"
	"\t$(\"unzoom\").setAttribute(\"class\", \"btn off\");\n"
	"}\n"
	"function search(text) {\n"
	"\tvar re = null, hits = [], sum = 0, end = -1;\n"
	"\tterm = text ? String(text) : null;\n"
	"\tif (term) { try { re = new RegExp(term); } catch (e) { re = null; } }\n"
	"\tframes.forEach(function (f) {\n"
	"\t\tvar m = term !== null && (re ? re.test(f.name) : f.name.indexOf(term) >= 0);\n"
	"\t\tf.r.setAttribute(\"fill\", m ? HL : f.fill);\n"
	"\t\tif (m) hits.push(f);\n"
	"\t});\n"
	"\t/* frames nest or are apart: the outermost of each nest counts */\n"
	"\thits.slice().sort(function (a, b) { return a.x - b.x || b.w - a.w; })\n"
	"\t\t.forEach(function (f) {\n"
	"\t\t\tif (f.x + f.w <= end + EPS) return;\n"
	"\t\t\tsum += f.w;\n"
	"\t\t\tend = f.x + f.w;\n"
	"\t\t});\n"
	"\tvar pct = root.w ? Math.min(100, 100 * sum / root.w) : 0;\n"
	"\t$(\"matched\").textContent = term ? \"Matched: \" + pct.toFixed(2) + \"% (\" +\n"
	"\t\thits.length + (hits.length == 1 ? \" frame)\" : \" frames)\") : \"\";\n"
	"\t$(\"search\").textContent = term ? \"Clear search\" : \"Search\";\n"
	"\treturn {frames: hits.length, percent: pct};\n"
	"}\n"
	"function ask() {\n"
	"\tif (term !== null) { search(null); return; }\n"
	"\tvar t = window.prompt(\"Search for (a regular expression):\", \"\");\n"
	"\tif (t) search(t);\n"
	"}\n"
	"function target(e) {\n"
	"\tfor (var n = e.target; n && n.getAttribute; n = n.parentNode)\n"
	"\t\tif (n.hasAttribute(\"data-i\")) return frames[+n.getAttribute(\"data-i\")];\n"
	"\treturn null;\n"
	"}\n"
	"$(\"frames\").addEventListener(\"click\", function (e) {\n"
	"\tvar f = target(e);\n"
	"\tif (f) { if (f === root) reset(); else zoom(f); }\n"
	"});\n"
	"$(\"frames\").addEventListener(\"mouseover\", function (e) {\n"
	"\tvar f = target(e);\n"
	"\t$(\"details\").textContent = f ? f.info : \"\";\n"
	"});\n"
	"$(\"frames\").addEventListener(\"mouseout\", function () {\n"
	"\t$(\"details\").textContent = \"\";\n"
	"});\n"
	"$(\"unzoom\").addEventListener(\"click\", reset);\n"
	"$(\"search\").addEventListener(\"click\", ask);\n"
	"document.addEventListener(\"keydown\", function (e) {\n"
	"\tif ((e.key === \"f\" && (e.ctrlKey || e.metaKey)) || e.key === \"/\") {\n"
	"\t\te.preventDefault();\n"
	"\t\tif (term !== null) search(null);\n"
	"\t\task();\n"
	"\t} else if (e.key === \"Escape\") {\n"
	"\t\tsearch(null);\n"
	"\t\treset();\n"
	"\t}\n"
	"});\n"
	"var q = /[?&]s=([^&]*)/.exec(window.location.search || \"\");\n"
	"if (q) search(decodeURIComponent(q[1].replace(/\\+/g, \" \")));\n"
	"window.trailFlame = {search: search, reset: reset, frames: frames.length,\n"
	"\tzoom: function (i) { zoom(frames[i]); }};\n"
	"})();\n"
	"]]></script>\n";

static int by_value(const void *a, const void *b)
{
	const struct object *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The objects the functions are in, by the value of their own calls. */
static int objects(struct flame *o)
{
	const struct trail_snode *nodes;
	uint32_t nn = trail__stacks_nodes(o->so.s, &nodes);
	size_t cap = 0;
	int rank = 0;

	for (uint32_t i = 1; i < nn; i++) {
		const struct trail_sname *nm = trail__stacks_name(o->so.s, nodes[i].name);
		struct object *ob;

		if (!nm->module)
			continue;
		ob = (struct object *)object_of(o, nm->module);
		if (!ob) {
			if (o->nobjs == cap) {
				struct object *t;

				cap = cap ? 2 * cap : 16;
				t = realloc(o->objs, cap * sizeof(*t));
				if (!t)
					return -ENOMEM;
				o->objs = t;
			}
			ob = &o->objs[o->nobjs++];
			*ob = (struct object){nm->module, 0, is_program(o->src, nm->module), 0};
		}
		ob->v += o->count ? nodes[i].calls : nodes[i].self_ns;
	}
	if (o->nobjs)
		qsort(o->objs, o->nobjs, sizeof(*o->objs), by_value);
	for (size_t k = 0; k < o->nobjs; k++)
		if (!o->objs[k].program)
			o->objs[k].rank = rank++;
	return 0;
}

/* The objects that hold the most of the graph, with their colours. */
static void legend(struct flame *o, struct lbuf *l, double y)
{
	double x = PAD;

	lb_put(l, "<g id=\"legend\">\n", 16);
	for (size_t k = 0; k < o->nobjs && k < LEGEND_MAX && o->objs[k].v; k++) {
		const char *b = base_name(o->objs[k].path);
		double w = 18 + (double)chars_of(b) * 6.5 + 14;

		if (x + w > IMG_W - PAD)
			break;
		lb_fmt(l, "<rect x=\"%.1f\"", x);
		lb_fmt(l, " y=\"%.1f\" width=\"12\" height=\"12\"", y - 10);
		lb_put(l, " fill=\"", 7);
		lb_rgb(l, object_colour(&o->objs[k], 0));
		lb_put(l, "\"><title>", 9);
		xml_text(l, o->objs[k].path, SIZE_MAX);
		lb_fmt(l, "</title></rect><text x=\"%.1f\"", x + 17);
		lb_fmt(l, " y=\"%.1f\">", y);
		xml_text(l, b, SIZE_MAX);
		lb_put(l, "</text>\n", 8);
		x += w;
	}
	lb_put(l, "</g>\n", 5);
}

static void head(struct flame *o, const struct trail_export_src *src)
{
	const char *cmd = trail_reader_info(src->reader, "command");
	const char *title = o->title ? o->title : cmd && *cmd ? cmd : "Flame graph";
	const struct trail_snode *root = &o->nodes[0];
	double h = o->height;
	struct lbuf l;

	lb_init(&l, o->f);
	lb_put(&l, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", 55);
	lb_fmt(&l, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" id=\"trail-flame\" "
		   "width=\"%.0f\"", IMG_W);
	lb_fmt(&l, " height=\"%.0f\"", h);
	lb_fmt(&l, " viewBox=\"0 0 %.0f", IMG_W);
	lb_fmt(&l, " %.0f\">\n<title>", h);
	xml_text(&l, title, SIZE_MAX);
	lb_put(&l, "</title>\n", 9);
	lb_str(&l, style);
	lb_fmt(&l, "<rect x=\"0\" y=\"0\" width=\"%.0f\"", IMG_W);
	lb_fmt(&l, " height=\"%.0f\" fill=\"#fbfaf6\"/>\n", h);
	lb_fmt(&l, "<text id=\"title\" x=\"%.1f\" y=\"26\">", IMG_W / 2.0);
	xml_text(&l, title, 100);
	lb_fmt(&l, "</text>\n<text id=\"subtitle\" x=\"%.1f\" y=\"46\">", IMG_W / 2.0);
	xml_text(&l, src->path, 80);
	lb_put(&l, ": ", 2);
	if (o->count) {
		lb_num(&l, root->total_calls, 0, ' ');
		lb_put(&l, " calls; a frame's width: its calls and those it made", 52);
	} else {
		lb_time(&l, root->total_ns);
		lb_put(&l, " in ", 4);
		lb_num(&l, root->total_calls, 0, ' ');
		lb_put(&l, " calls; a frame's width: its time with what it called", 53);
	}
	lb_put(&l, "</text>\n", 8);
	lb_fmt(&l, "<text id=\"unzoom\" class=\"btn off\" x=\"%.0f\" y=\"26\">Reset zoom</text>\n",
	       PAD);
	lb_fmt(&l, "<text id=\"search\" class=\"btn\" x=\"%.0f\" y=\"26\" "
		   "style=\"text-anchor: end\">Search</text>\n", IMG_W - PAD);
	lb_fmt(&l, "<text id=\"matched\" x=\"%.0f\"", IMG_W - PAD);
	lb_fmt(&l, " y=\"%.0f\" style=\"text-anchor: end\"></text>\n", h - 8);
	lb_fmt(&l, "<text id=\"details\" x=\"%.0f\"", PAD);
	lb_fmt(&l, " y=\"%.0f\"> </text>\n", h - 8);
	legend(o, &l, h - 26);
	lb_put(&l, "<g id=\"frames\">\n", 16);
	lb_flush(&l);
}

static void tail(struct flame *o)
{
	struct lbuf l;

	lb_init(&l, o->f);
	lb_put(&l, "</g>\n", 5);
	lb_put(&l, script, sizeof(script) - 1);
	lb_put(&l, "</svg>\n", 7);
	lb_flush(&l);
}

static int end(void *ctx, const struct trail_export_src *src)
{
	struct flame *o = ctx;
	int rc = trail__stacks_finish(o->so.s, src);
	uint64_t all;

	if (rc)
		return rc;
	o->src = src;
	trail__stacks_nodes(o->so.s, &o->nodes);
	all = value(o, &o->nodes[0]);
	o->scale = all ? (IMG_W - 2.0 * PAD) / (double)all : 0;
	o->min = (uint64_t)(MIN_PX / (o->scale ? o->scale : 1));
	if ((rc = objects(o)) || (rc = walk(o, NULL)))
		return rc;
	o->height = TOP + (o->maxdepth + 1.0) * FRAME_H + BOTTOM;
	head(o, src);
	if ((rc = walk(o, frame)))
		return rc;
	tail(o);
	return 0;
}

static void flame_free(void *ctx)
{
	struct flame *o = ctx;

	if (!o)
		return;
	trail__stacks_free(o->so.s);
	free(o->objs);
	free(o->x);
	free(o);
}

struct trail_output *trail__export_flamegraph(const struct trail_export_opts *opts)
{
	static const struct trail_output ops = {
		.name = "flamegraph", .begin = trail__stacks_output_begin,
		.event = trail__stacks_output_event, .call = trail__stacks_output_call, .end = end,
		.free = flame_free,
	};
	struct flame *o;

	o = trail__stacks_output_new(sizeof(*o), &ops, opts);
	if (!o)
		return NULL;
	o->nx = 64;
	o->x = calloc(o->nx, sizeof(*o->x));
	if (!o->x) {
		flame_free(o);
		errno = ENOMEM;
		return NULL;
	}
	o->f = opts->out;
	o->count = opts->count;
	o->title = opts->title;
	return &o->so.out;
}
