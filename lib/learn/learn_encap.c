/*
 * Lesson "encap": the same RDMA WRITE as InfiniBand, RoCEv1 and RoCEv2 put it on the wire.
 *
 * The Ethernet encapsulations are built by lib/wire and parsed back, so every layer's size is
 * read off a real frame. Native InfiniBand is laid out from the IBTA's header sizes: LRH 8 bytes
 * (IBA 7.7), BTH 12, RETH 16, ICRC 4 and VCRC 2 (IBA 7.8), no GRH inside one subnet.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roce_learn.h"
#include "roce_wire.h"
#include "learn_private.h"

#define ETH_FCS 4
#define ETH_PREAMBLE_IFG 20	/* preamble 7, SFD 1, inter-frame gap 12 */

static const char *const encap_name[ROCE_ENCAP_NUM] = {
	[ROCE_ENCAP_IB] = "InfiniBand",
	[ROCE_ENCAP_V1] = "RoCEv1",
	[ROCE_ENCAP_V2_IP4] = "RoCEv2 / IPv4",
	[ROCE_ENCAP_V2_IP6] = "RoCEv2 / IPv6",
	[ROCE_ENCAP_V2_VLAN] = "RoCEv2 / 802.1Q / IPv4",
};

static void add(struct roce_encap_frame *f, const char *name, uint32_t bytes)
{
	if (bytes == 0 || f->nlayers == ROCE_ENCAP_MAX_LAYERS)
		return;
	f->layer[f->nlayers].name = name;
	f->layer[f->nlayers].bytes = bytes;
	f->nlayers++;
}

static void encap_ib(uint32_t payload, struct roce_encap_frame *f)
{
	uint32_t pad = (4 - payload % 4) % 4;

	add(f, "LRH", 8);
	add(f, "BTH", 12);
	add(f, "RETH", 16);
	add(f, "payload", payload);
	add(f, "pad", pad);
	add(f, "ICRC", 4);
	add(f, "VCRC", 2);
	f->packet_bytes = 8 + 12 + 16 + payload + pad + 4 + 2;
	f->wire_bytes = f->packet_bytes;	/* link symbols (delimiters, idles) not counted */
}

static int encap_eth(enum roce_encap e, uint32_t payload, struct roce_encap_frame *f)
{
	static uint8_t buf[4096 + 256];
	struct roce_pkt pkt, p;
	int len;

	roce_pkt_init(&pkt, e == ROCE_ENCAP_V1 ? ROCE_KIND_ROCEV1 : ROCE_KIND_ROCEV2,
		      ROCE_OP_RC_RDMA_WRITE_ONLY);
	if (e == ROCE_ENCAP_V2_IP6) {
		static const uint8_t a[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };

		pkt.ip_ver = 6;
		memcpy(pkt.src.b, a, 16);
		memcpy(pkt.dst.b, a, 16);
		pkt.dst.b[15] = 2;
	}
	if (e == ROCE_ENCAP_V2_VLAN) {
		pkt.nvlan = 1;
		pkt.vlan[0].tpid = 0x8100;
		pkt.vlan[0].pcp = 3;
		pkt.vlan[0].vid = 100;
	}
	pkt.payload_len = payload;
	pkt.reth.dmalen = payload;
	len = roce_wire_build(&pkt, 0, buf, sizeof(buf));
	if (len < 0)
		return len;
	if (roce_wire_parse(buf, (uint32_t)len, 0, &p) != 0)
		return -EPROTO;
	add(f, "Eth", 14);
	add(f, "802.1Q", p.l3_off - 14u);
	if (e == ROCE_ENCAP_V1) {
		add(f, "GRH", p.bth_off - p.l3_off);
	} else {
		add(f, p.ip_ver == 4 ? "IPv4" : "IPv6", p.l4_off - p.l3_off);
		add(f, "UDP", p.bth_off - p.l4_off);
	}
	add(f, "BTH", 12);
	add(f, "RETH", p.payload_off - p.bth_off - 12u);
	add(f, "payload", p.payload_len);
	add(f, "pad", p.pad);
	add(f, "ICRC", 4);
	add(f, "FCS", ETH_FCS);
	f->packet_bytes = (uint32_t)len + ETH_FCS;
	f->wire_bytes = f->packet_bytes + ETH_PREAMBLE_IFG;
	return 0;
}

int roce_learn_encap(enum roce_encap e, uint32_t payload, struct roce_encap_frame *f)
{
	int rc = 0;

	if ((unsigned int)e >= ROCE_ENCAP_NUM || payload > 4096)
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	f->name = encap_name[e];
	f->payload = payload;
	if (e == ROCE_ENCAP_IB)
		encap_ib(payload, f);
	else
		rc = encap_eth(e, payload, f);
	if (rc == 0)
		f->efficiency = (double)payload / f->wire_bytes;
	return rc;
}

/* ---- the lesson ---- */

/* Okabe-Ito colours by layer family: link, network, transport (IB), data, checks. */
static const char *layer_colour(const char *name)
{
	if (strcmp(name, "payload") == 0)
		return "#cfe8cf";
	if (strcmp(name, "BTH") == 0 || strcmp(name, "RETH") == 0)
		return "#E69F00";
	if (strcmp(name, "IPv4") == 0 || strcmp(name, "IPv6") == 0 || strcmp(name, "UDP") == 0 ||
	    strcmp(name, "GRH") == 0)
		return "#56B4E9";
	if (strcmp(name, "ICRC") == 0 || strcmp(name, "VCRC") == 0 || strcmp(name, "FCS") == 0 ||
	    strcmp(name, "pad") == 0)
		return "#CC79A7";
	return "#009E73";	/* Eth, 802.1Q, LRH */
}

/*
 * The packets drawn as rows of boxes, one per header, header widths to scale (4 px a byte),
 * the payload a fixed box: the picture of the lesson.
 */
/* A box's width when it is drawn too narrow for its name (0 < width < 28), else 0. */
static int narrow(const struct roce_encap_layer *l, int px, int pay_w)
{
	int w = strcmp(l->name, "payload") == 0 ? pay_w : (int)l->bytes * px;

	return w > 0 && w < 28 ? w : 0;
}

static char *layers_svg(const struct roce_encap_frame *f, int n)
{
	const int px = 4, pay_w = 120, row_h = 46, left = 190, top = 30;
	int width = 0, height = top + n * row_h + 34;
	size_t cap = 16384, len = 0;
	char *s = malloc(cap);

	if (s == NULL)
		return NULL;
	for (int i = 0; i < n; i++) {
		int w = left;

		for (int k = 0; k < f[i].nlayers; k++)
			w += strcmp(f[i].layer[k].name, "payload") == 0 ? pay_w :
								       (int)f[i].layer[k].bytes * px;
		width = w > width ? w : width;
	}
	width += 140;
	width = width < 1120 ? 1120 : width;	/* room for the key */
#define OUT(...)                                                                   \
	do {                                                                       \
		int m_ = snprintf(s + len, cap - len, __VA_ARGS__);                \
		if (m_ < 0 || (size_t)m_ >= cap - len) {                           \
			free(s);                                                   \
			return NULL;                                               \
		}                                                                  \
		len += (size_t)m_;                                                 \
	} while (0)
	OUT("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"100%%\" "
	    "role=\"img\" font-family=\"system-ui,sans-serif\" font-size=\"12\">\n"
	    "<title>The same RDMA WRITE in each encapsulation</title>\n"
	    /* a file of its own: white under it, as the charts, not a dark viewer's background */
	    "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
	    "<text x=\"0\" y=\"16\" font-size=\"14\" font-weight=\"600\">Headers to scale "
	    "(%d px a byte); the %u-byte payload not to scale</text>\n",
	    width, height, px, f[0].payload);
	for (int i = 0; i < n; i++) {
		int x = left, y = top + i * row_h;

		OUT("<text x=\"0\" y=\"%d\" font-weight=\"600\">%s</text>\n", y + 24, f[i].name);
		for (int k = 0; k < f[i].nlayers; k++) {
			const struct roce_encap_layer *l = &f[i].layer[k];
			bool pay = strcmp(l->name, "payload") == 0;
			int w = pay ? pay_w : (int)l->bytes * px;

			OUT("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"34\" fill=\"%s\" "
			    "stroke=\"#fff\"><title>%s: %u bytes</title></rect>\n",
			    x, y + 4, w, layer_colour(l->name), l->name, l->bytes);
			if (w >= 28)
				OUT("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n"
				    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">"
				    "%u</text>\n",
				    x + w / 2, y + 18, l->name, x + w / 2, y + 32, l->bytes);
			else if (w > 0 && (k == 0 || narrow(&f[i].layer[k - 1], px, pay_w) == 0)) {
				/* too narrow for its name (802.1Q 4, ICRC 4, FCS 4): the run of
				 * narrow boxes from here named above it, "ICRC 4, FCS 4" */
				char names[96];
				int run = 0, nn = 0;

				names[0] = '\0';
				for (int j = k; j < f[i].nlayers; j++) {
					int wj = narrow(&f[i].layer[j], px, pay_w);

					if (wj == 0)
						break;
					nn += snprintf(names + nn, sizeof(names) - (size_t)nn, "%s%s %u",
						       j > k ? ", " : "", f[i].layer[j].name,
						       f[i].layer[j].bytes);
					if (nn >= (int)sizeof(names))
						break;
					run += wj;
				}
				OUT("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"9\">"
				    "%s</text>\n", x + run / 2, y + 2, names);
			}
			x += w;
		}
		if (f[i].wire_bytes != f[i].packet_bytes)	/* Ethernet: the part not drawn */
			OUT("<text x=\"%d\" y=\"%d\">%u B + %u B preamble and gap: %.1f%%</text>\n",
			    x + 8, y + 24, f[i].packet_bytes, f[i].wire_bytes - f[i].packet_bytes,
			    100 * f[i].efficiency);
		else
			OUT("<text x=\"%d\" y=\"%d\">%u B: %.1f%%</text>\n", x + 8, y + 24,
			    f[i].packet_bytes, 100 * f[i].efficiency);
	}
	{
		static const struct {
			const char *what, *like;
		} key[] = { { "link (Eth, 802.1Q, LRH)", "Eth" }, { "network (IP, UDP, GRH)", "UDP" },
			    { "IB transport (BTH, RETH)", "BTH" }, { "payload", "payload" },
			    { "checks (ICRC, VCRC, FCS), pad when needed", "FCS" } };
		int x = 0, y = top + n * row_h + 12;

		for (size_t k = 0; k < ROCE_DIM(key); k++) {
			OUT("<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>"
			    "<text x=\"%d\" y=\"%d\">%s</text>\n",
			    x, y, layer_colour(key[k].like), x + 20, y + 12, key[k].what);
			x += 28 + 7 * (int)strlen(key[k].what);
		}
	}
	OUT("</svg>\n");
#undef OUT
	return s;
}

static int run_encap(const struct roce_learn_conf *conf, struct roce_report *rep, char *err,
		     size_t errlen)
{
	static const char *const head[] = { "<encapsulation", "<headers", "packet B", "wire B",
					    "payload %", "vs InfiniBand" };
	static const uint32_t sizes[] = { 64, 256, 1024, 4096 };
	struct roce_encap_frame f[ROCE_ENCAP_NUM];
	struct roce_table *t;
	struct roce_chart *c;
	double x[64], y[ROCE_ENCAP_NUM][64];
	size_t npts = 0;
	char *svg;

	learn_text(conf, rep,
		   "RDMA's transport headers (BTH, and RETH for a WRITE) are InfiniBand's, whatever "
		   "carries them. InfiniBand puts them behind its own 8-byte local route header (LRH). "
		   "RoCEv1 puts them in an Ethernet frame behind InfiniBand's 40-byte global route "
		   "header (GRH, Ethertype 0x8915): it cannot cross an IP router. RoCEv2 replaces the "
		   "GRH with IPv4 or IPv6 and UDP to port 4791, so it routes like any IP traffic, and "
		   "the UDP source port gives ECMP its entropy. The ICRC covers the parts that do not "
		   "change in flight. The frames below were built by rocelab's codec and parsed back.");
	for (int e = 0; e < ROCE_ENCAP_NUM; e++) {
		if (roce_learn_encap((enum roce_encap)e, 1024, &f[e]) != 0) {
			snprintf(err, errlen, "cannot lay out %d", e);
			return -EINVAL;
		}
	}
	t = roce_table_create("An RDMA WRITE Only of 1024 bytes", ROCE_DIM(head), head);
	if (t == NULL)
		return learn_nomem(err, errlen);
	for (int e = 0; e < ROCE_ENCAP_NUM; e++) {
		char hdrs[128];
		size_t n = 0;

		hdrs[0] = '\0';
		for (int k = 0; k < f[e].nlayers; k++) {
			if (strcmp(f[e].layer[k].name, "payload") == 0)
				continue;
			n += (size_t)snprintf(hdrs + n, sizeof(hdrs) - n, "%s%s %u",
					      n ? " + " : "", f[e].layer[k].name, f[e].layer[k].bytes);
			if (n >= sizeof(hdrs))
				break;
		}
		learn_row(t, "%s\t%s\t%u\t%u\t%.1f\t%+d B", f[e].name, hdrs, f[e].packet_bytes,
			       f[e].wire_bytes, 100 * f[e].efficiency,
			       (int)f[e].wire_bytes - (int)f[ROCE_ENCAP_IB].wire_bytes);
	}
	roce_table_note(t, "wire B: Ethernet adds preamble, SFD and inter-frame gap (20 B); "
			   "InfiniBand's link symbols are not counted");
	learn_table(conf, rep, t);

	svg = layers_svg(f, ROCE_ENCAP_NUM);
	if (svg == NULL) {
		roce_table_destroy(t);
		return learn_nomem(err, errlen);
	}
	roce_report_svg(rep, svg);
	learn_write_file(conf, "encap-layers.svg", svg);
	free(svg);

	for (uint32_t p = 32; p <= 4096 && npts < ROCE_DIM(x); p = p < 512 ? p * 2 : p + 512) {
		x[npts] = p;
		for (int e = 0; e < ROCE_ENCAP_NUM; e++) {
			struct roce_encap_frame g;

			roce_learn_encap((enum roce_encap)e, p, &g);
			y[e][npts] = 100 * g.efficiency;
		}
		npts++;
	}
	c = roce_chart_create(ROCE_CHART_LINE, "Payload share of the bytes on the wire",
			      "payload per packet (bytes)", "payload share (%)");
	if (c != NULL)
		roce_chart_xlog(c);	/* 32 to 4096 bytes: the small sizes are where it drops */
	for (int e = 0; c != NULL && e < ROCE_ENCAP_NUM; e++)
		roce_chart_series(c, f[e].name, x, y[e], npts);
	learn_chart(conf, rep, c, "encap-efficiency.svg");

	if (conf->out != NULL) {
		fprintf(conf->out, "\nPayload share at other sizes:");
		for (size_t i = 0; i < ROCE_DIM(sizes); i++) {
			struct roce_encap_frame a, b;

			roce_learn_encap(ROCE_ENCAP_IB, sizes[i], &a);
			roce_learn_encap(ROCE_ENCAP_V2_IP4, sizes[i], &b);
			fprintf(conf->out, "  %u B: IB %.1f%%, RoCEv2 %.1f%%", sizes[i],
				100 * a.efficiency, 100 * b.efficiency);
		}
		fputc('\n', conf->out);
	}
	roce_table_destroy(t);
	return 0;
}

const struct roce_lesson roce_lesson_encap = {
	.name = "encap",
	.title = "InfiniBand vs RoCE: the same RDMA WRITE, three encapsulations",
	.summary = "IB, RoCEv1 and RoCEv2 headers around one WRITE, byte by byte, and what they cost",
	.run = run_encap,
};
