#!/usr/bin/env python3
"""`rocelab learn all --quick`: every page and picture parses as XML, with the pictures inline.

Checks, with parsers rocelab does not share: each LESSON.html and each *.svg parses with
xml.etree; each page holds an inline <svg> and a <table>; the encapsulation picture names every
layer the table does; a verbs bar's value is a figure of its table, as printed there; the loss
table names each loss rate as the charts' categories do, and gives no resends-per-loss without
a loss; no cell reads "0.0" (a figure rounded away, or a zero dressed as a measurement); each
picture file is white under its drawing; index.html links every lesson's page and nothing else,
and says to run each scenario that docs/learn.md's table does; and a second run writes the
same bytes (the lessons are deterministic).

Usage: diff_learn_pages.py PATH/TO/rocelab      (exit 0 all good, 1 a check failed)
"""
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
LESSONS = ["encap", "verbs", "bdp", "loss", "gpudirect", "baseline"]


def run(rocelab, out):
    subprocess.run([rocelab, "learn", "all", "--quick", "--out", out], check=True,
                   stdout=subprocess.DEVNULL)
    return {f: open(os.path.join(out, f), "rb").read() for f in sorted(os.listdir(out))}


def main():
    rocelab = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        first = run(rocelab, a)
        second = run(rocelab, b)
    for lesson in LESSONS:
        if lesson + ".html" not in first:
            failures.append("no page for " + lesson)
    for name, data in first.items():
        try:
            root = ET.fromstring(data)
        except ET.ParseError as e:
            failures.append("%s: not well-formed XML: %s" % (name, e))
            continue
        if name.endswith(".html"):
            if not root.iter(SVG + "svg") or next(root.iter(SVG + "svg"), None) is None:
                failures.append(name + ": no inline picture")
            if next(root.iter("{http://www.w3.org/1999/xhtml}table"), None) is None:
                failures.append(name + ": no table")
        if name.endswith(".svg"):
            # a picture file is white under its drawing, or a dark viewer hides its black text
            drawn = [e for e in root if e.tag not in (SVG + "title", SVG + "defs", SVG + "style")]
            first_g = drawn[0] if drawn else None
            if first_g is not None and first_g.tag == SVG + "g":	# a chart: its group
                first_g = next((e for e in first_g if e.tag != SVG + "title"), None)
            if (first_g is None or first_g.tag != SVG + "rect" or
                    first_g.get("width") != "100%" or first_g.get("height") != "100%" or
                    first_g.get("fill", "").lower() not in ("#fff", "#ffffff", "white")):
                failures.append(name + ": no white background under the picture")
        if second.get(name) != data:
            failures.append(name + ": a second run wrote other bytes")
    if "index.html" not in first:
        failures.append("no index.html")
    else:
        links = {a.get("href") for a in ET.fromstring(first["index.html"]).iter(SVG + "a")}
        pages = {n for n in first if n.endswith(".html") and n != "index.html"}
        if links != pages:
            failures.append("index.html links %s, the pages are %s" % (sorted(links), sorted(pages)))
        # the index's 'Also taught by running' runs every scenario docs/learn.md's table does
        docs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "learn.md")
        taught = set(re.findall(r"rocelab run (scenarios/[\w.-]+\.ini)", open(docs).read()))
        cells = {(td.text or "").strip()
                 for td in ET.fromstring(first["index.html"]).iter("{http://www.w3.org/1999/xhtml}td")}
        if not taught:
            failures.append("docs/learn.md names no scenario to run")
        for ini in sorted(taught):
            if "rocelab run " + ini not in cells:
                failures.append("index.html does not say to run %s, as docs/learn.md does" % ini)
    for name, data in first.items():
        if name.endswith(".html"):
            for td in ET.fromstring(data).iter("{http://www.w3.org/1999/xhtml}td"):
                if (td.text or "").strip() in ("0.0", "0.00"):
                    failures.append("%s: a cell reads %s" % (name, td.text.strip()))
    if "verbs.html" in first:
        page = ET.fromstring(first["verbs.html"])
        cells = {(td.text or "").strip() for td in page.iter("{http://www.w3.org/1999/xhtml}td")}
        for t in page.iter(SVG + "text"):
            if t.get("class") == "value" and t.text not in cells:
                failures.append("verbs.html: a bar says %s, its table does not" % t.text)
    if "loss.html" in first:
        page = ET.fromstring(first["loss.html"])
        ticks = {t.text for t in page.iter(SVG + "text") if t.get("class") == "tick"}
        for tr in page.iter("{http://www.w3.org/1999/xhtml}tr"):
            row = [(td.text or "").strip() for td in tr.iter("{http://www.w3.org/1999/xhtml}td")]
            if not row:
                continue
            if row[0] not in ticks:
                failures.append("loss.html: loss rate %s is no category of the charts" % row[0])
            if row[3] == "0" and row[5] != "-":
                failures.append("loss.html: %s resent per loss with nothing lost" % row[5])
    layers = ET.fromstring(first["encap-layers.svg"])
    titles = {t.text.split(":")[0] for t in layers.iter(SVG + "title") if t.text}
    for want in ["LRH", "GRH", "IPv4", "IPv6", "UDP", "BTH", "RETH", "ICRC", "VCRC", "FCS",
                 "802.1Q", "Eth", "payload"]:
        if want not in titles:
            failures.append("encap-layers.svg has no %s box" % want)
    for f in failures:
        print("FAIL", f)
    print("%d files checked, %d failures" % (len(first), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
