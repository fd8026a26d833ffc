# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The stack tools' other outputs read back as folded lines ("comm;root;...;leaf
# count", inlined calls marked _[i]), so that one pattern judges them all:
# JSON, go tool pprof's traces, bcc's text and the SVG flame graph.

# json_folded JSON: each object's frames (root first) and its count.
json_folded() {
	jq -r '(.target // .comm) + ";" + (.frames | join(";")) + " " +
		((.samples // .total_us) | tostring)' "$1"
}

# pprof_folded PROFILE [OPTION...]: go tool pprof's traces (leaf first, the
# process name last), each turned around, weighted by its value in ns or
# count (of the sample type -sample_index=TYPE names, else the default);
# its labels left out.
pprof_folded() {
	go tool pprof -traces "${@:2}" "$1" 2>/dev/null | awk '
		function flush() { if (n) { line = f[n]; for (i = n - 1; i >= 1; i--) line = line ";" f[i]
			printf "%s %.0f\n", line, v } n = 0 }
		/^-+\+-+$/ { flush(); go = 1; next }
		!go { next }
		# Labels ("container:  ID", "cgroup:  /system.slice/x") come before the frames.
		!n && $1 ~ /^[A-Za-z_][A-Za-z0-9_.]*:$/ { next }
		{ name = $0
		  if (!n) { v = $1; u = v; sub(/^[0-9.]+/, "", u); v += 0
			    v *= u == "hrs" ? 3.6e12 : u == "mins" ? 6e10 : u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "us" ? 1e3 : 1
			    sub(/^ *[0-9.]+[a-z]* +/, "", name) }
		  sub(/^ +/, "", name)
		  if (sub(/ \(inline\)$/, "", name)) name = name "_[i]"
		  f[++n] = name }
		END { flush() }'
}

# text_folded TEXT: bcc's multi-line stacks (leaf first, then "-  comm (pid)"
# and the count); offwaketime's (waker, "--", target leaf first, its
# "target:" line) as its folded lines have them: target root first, "--",
# then the waker from its leaf.
text_folded() {
	awk 'function name(x) { sub(/^ +/, "", x); if (sub(/ \(inlined\)$/, "", x)) x = x "_[i]"; return x }
		/^    waker: / { waker = 1; nw = nt = 0; side = "w"; next }
		/^    -- +--$/ && waker { side = "t"; next }
		/^    target: / { comm = $2; next }
		/^    -  +/ { comm = $2; next }
		/^        [0-9]+$/ { line = comm
			for (i = nt; i >= 1; i--) line = line ";" t[i]
			if (waker) { line = line ";--"; for (i = 1; i <= nw; i++) line = line ";" w[i] }
			print line, $1; nt = nw = 0; waker = 0; side = "t"; next }
		/^    [^ ]/ { if (side == "w") w[++nw] = name($0); else t[++nt] = name($0); next }
		/^$/ { if (!waker) { side = "t" } }
		BEGIN { side = "t" }' "$1"
}

# svg_folded SVG: the flame graph's boxes back into folded lines: each box
# under the one a level below that spans it, its own count (data-v less
# its children's) on the path of names up to it; "all" left out.
svg_folded() {
	python3 - "$1" <<-'PY'
	import html, re, sys
	boxes = []
	for m in re.finditer(r'<g class="f" data-v="(\d+)"( data-i="1")?><title>(.*?)</title>'
	                     r'<rect x="([\d.]+)" y="(\d+)" width="([\d.]+)"', open(sys.argv[1]).read()):
	    v, inlined, title, x, y, w = m.groups()
	    name = re.sub(r' \([^()]*\)$', '', html.unescape(title))
	    if inlined:
	        name = name[:-len(' (inlined)')] + '_[i]'
	    boxes.append({'v': int(v), 'name': name, 'x': float(x), 'y': int(y), 'w': float(w),
	                  'kids': 0, 'up': None})
	for b in boxes:
	    for p in boxes:
	        if p['y'] == b['y'] + 16 and p['x'] - 0.01 <= b['x'] and \
	           b['x'] + b['w'] <= p['x'] + p['w'] + 0.01:
	            b['up'] = p
	            p['kids'] += b['v']
	            break
	for b in boxes:
	    path, p = [], b
	    while p and p['name'] != 'all':
	        path.append(p['name'])
	        p = p['up']
	    if path and b['v'] > b['kids']:
	        print(';'.join(reversed(path)), b['v'] - b['kids'])
	PY
}

# pprof_functions PROFILE: each Function of a pprof file (gzip'd
# profile.proto) as "name<TAB>system_name<TAB>filename<TAB>start_line",
# read from the protobuf itself: go tool pprof shows no system name.
pprof_functions() {
	python3 - "$1" <<-'PY'
	import gzip, sys

	def fields(b):
	    i = 0
	    while i < len(b):
	        key, i = varint(b, i)
	        if key & 7 == 0:
	            v, i = varint(b, i)
	        elif key & 7 == 2:
	            n, i = varint(b, i)
	            v, i = b[i:i + n], i + n
	        else:
	            raise ValueError("wire type %d" % (key & 7))
	        yield key >> 3, v

	def varint(b, i):
	    v = s = 0
	    while True:
	        c = b[i]
	        i += 1
	        v |= (c & 0x7f) << s
	        s += 7
	        if c < 0x80:
	            return v, i

	p = gzip.open(sys.argv[1]).read()
	strings = [v.decode() for k, v in fields(p) if k == 6]
	for k, v in fields(p):
	    if k == 5:
	        f = dict(fields(v))
	        print("\t".join([strings[f.get(2, 0)], strings[f.get(3, 0)], strings[f.get(4, 0)],
	                         str(f.get(5, 0))]))
	PY
}
