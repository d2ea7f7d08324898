package mirror_test

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/versions"
)

// The kernel requests of real tools, recorded from a real mount by
// fusefs's TestToolTraces (MEMFS_RECORD_TRACES=1) in go-fuse's debug
// format, are replayed here as the mirror's events.
var (
	rxLine   = regexp.MustCompile(`^rx (\d+): (\w+) n(\d+) (.*) p(\d+)$`)
	txLine   = regexp.MustCompile(`^tx (\d+):\s+(.*)$`)
	nodeOut  = regexp.MustCompile(`^OK, \{n(\d+) `)
	fhOut    = regexp.MustCompile(`\{Fh (\d+) `)
	fhIn     = regexp.MustCompile(`\{Fh (\d+)`)
	names    = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
	writeIn  = regexp.MustCompile(`\{Fh (\d+) \[(\d+) \+(\d+)\)[^}]*\}("(?:[^"\\]|\\.)*")(\.\.\.)?`)
	renameIn = regexp.MustCompile(`^\{i(\d+) `)
	sizeIn   = regexp.MustCompile(`size (\d+)`)
	fhSet    = regexp.MustCompile(`fh (\d+)`)
)

type trace struct {
	name, dir string
	want      []string
	rx        []string
	tx        map[string]string
}

func readTrace(t *testing.T, file string) trace {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := trace{tx: map[string]string{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "# dir: "):
			tr.dir = strings.TrimPrefix(l, "# dir: ")
		case strings.HasPrefix(l, "# want: "):
			tr.want = strings.Fields(strings.TrimPrefix(l, "# want: "))
		case strings.HasPrefix(l, "rx "):
			tr.rx = append(tr.rx, l)
		default:
			if m := txLine.FindStringSubmatch(l); m != nil {
				tr.tx[m[1]] = m[2]
			}
		}
	}
	tr.name = strings.TrimSuffix(filepath.Base(file), ".trace")
	return tr
}

// replay plays the trace's requests that succeeded in the real mount.
func replay(t *testing.T, r *rig, tr trace) {
	nodes := map[string]string{} // node id -> path under the case's directory
	// go-fuse numbers a node's open files, so two nodes may have a
	// handle of one number open at once (emacs reads its lock while it
	// saves): a handle is known by its node and number.
	fhs := map[string]mirror.HandleID{}
	fh := func(node, n string) string { return node + "/" + n }
	child := func(parent, name string) (string, bool) {
		p, ok := nodes[parent]
		if !ok {
			return "", false
		}
		return path.Join(p, name), true
	}
	for _, l := range tr.rx {
		m := rxLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		unique, op, node, args := m[1], m[2], m[3], m[4]
		pid, _ := strconv.Atoi(m[5])
		out := tr.tx[unique]
		if !strings.HasPrefix(out, "OK") {
			continue
		}
		var ns []string
		for _, q := range names.FindAllStringSubmatch(args, -1) {
			s, err := strconv.Unquote(`"` + q[1] + `"`)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			ns = append(ns, s)
		}
		switch op {
		case "MKDIR":
			if len(ns) == 1 && ns[0] == tr.dir {
				if o := nodeOut.FindStringSubmatch(out); o != nil {
					nodes[o[1]] = "/"
				}
			}
		case "LOOKUP":
			if o := nodeOut.FindStringSubmatch(out); o != nil && o[1] != "0" && len(ns) == 1 {
				if p, ok := child(node, ns[0]); ok {
					nodes[o[1]] = p
				}
			}
		case "CREATE":
			p, ok := child(node, ns[0])
			if !ok {
				continue
			}
			o, f := nodeOut.FindStringSubmatch(out), fhOut.FindStringSubmatch(out)
			pl, e := r.do(mirror.Create{Path: p, Tid: pid, Append: strings.Contains(args, "APPEND")})
			if e != 0 {
				t.Fatalf("%s: %v", l, e)
			}
			nodes[o[1]], fhs[fh(o[1], f[1])] = p, pl.Handle
		case "OPEN":
			p, ok := nodes[node]
			if !ok {
				continue
			}
			flags := args[:strings.IndexByte(args, '}')]
			f := fhOut.FindStringSubmatch(out)
			pl, e := r.do(mirror.Open{File: r.file(p), Tid: pid, Write: strings.Contains(flags, "WRONLY") || strings.Contains(flags, "RDWR"),
				Trunc: strings.Contains(flags, "TRUNC"), Append: strings.Contains(flags, "APPEND")})
			if e != 0 {
				t.Fatalf("%s: %v", l, e)
			}
			fhs[fh(node, f[1])] = pl.Handle
		case "WRITE":
			w := writeIn.FindStringSubmatch(args)
			h, ok := fhs[fh(node, w[1])]
			if !ok {
				continue
			}
			off, _ := strconv.ParseInt(w[2], 10, 64)
			size, _ := strconv.Atoi(w[3])
			data, _ := strconv.Unquote(w[4])
			// go-fuse logs the first 8 bytes: the rest is filler.
			data += strings.Repeat("x", size-len(data))
			if _, e := r.do(mirror.Write{Handle: h, Off: off, Data: []byte(data)}); e != 0 {
				t.Fatalf("%s: %v", l, e)
			}
		case "FLUSH", "FSYNC", "RELEASE":
			f := fhIn.FindStringSubmatch(args)
			h, ok := fhs[fh(node, f[1])]
			if !ok {
				continue
			}
			var ev mirror.Event = mirror.Flush{Handle: h}
			switch op {
			case "FSYNC":
				ev = mirror.Fsync{Handle: h}
			case "RELEASE":
				ev = mirror.Release{Handle: h}
				delete(fhs, fh(node, f[1]))
			}
			r.do(ev)
		case "SETATTR":
			s := sizeIn.FindStringSubmatch(args)
			p, ok := nodes[node]
			if s == nil || !ok {
				continue
			}
			size, _ := strconv.ParseInt(s[1], 10, 64)
			var h mirror.HandleID
			if f := fhSet.FindStringSubmatch(args); f != nil {
				h = fhs[fh(node, f[1])]
			}
			if _, e := r.do(mirror.Truncate{File: r.file(p), Handle: h, Size: size}); e != 0 {
				t.Fatalf("%s: %v", l, e)
			}
		case "RENAME", "RENAME2":
			d := renameIn.FindStringSubmatch(args)
			from, ok1 := child(node, ns[0])
			to, ok2 := child(d[1], ns[1])
			if !ok1 || !ok2 {
				continue
			}
			if e := r.rename(from, to, pid); e != 0 {
				t.Fatalf("%s: %v", l, e)
			}
			for n, p := range nodes {
				if p == from {
					nodes[n] = to
				}
			}
		case "UNLINK":
			if p, ok := child(node, ns[0]); ok {
				if e := r.unlink(p); e != 0 {
					t.Fatalf("%s: %v", l, e)
				}
			}
		}
	}
}

// recordedTools are the traces the suite must hold: every atomic saver
// and editor whose behaviour the mount keeps, and shell redirection in
// each shell.
var recordedTools = []string{
	"bash-echo-twice", "dash-echo-twice", "busybox-echo-twice", "bash-cat-heredoc", "bash-printf", "bash-exec3", "bash-colon",
	"sed-i", "perl-pi", "python-os-replace", "sdk-tmp-rename", "cp-mv", "git-lock",
	"vim", "vim-swap", "vim-tty", "nano", "emacs", "emacs-tty",
}

// TestReplayTraces replays each recorded tool and checks the history it
// leaves: what the same tool left through the real mount, and no version
// of any other file (a temporary, swap, lock or backup file).
func TestReplayTraces(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "traces", "*.trace"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces in testdata/traces: %v", err)
	}
	for _, name := range recordedTools {
		if !slices.Contains(files, filepath.Join("testdata", "traces", name+".trace")) {
			t.Errorf("no trace of %s: record it with MEMFS_RECORD_TRACES=1 go test -run 'TestToolTraces/^%s$' ./fusefs/", name, name)
		}
	}
	for _, file := range files {
		tr := readTrace(t, file)
		t.Run(tr.name, func(t *testing.T) {
			r := newRig(t, versions.StoreParams{}, false)
			replay(t, r, tr)
			r.advance(4 * grace)
			vs := r.history("/x.md")
			var got []string
			for i, v := range vs {
				got = append(got, string(v.Operation))
				if v.Content != nil && *v.Content == "" && !(tr.name == "bash-colon" && i == len(vs)-1) {
					t.Errorf("version %d of x.md is empty", i+1)
				}
				if v.MemoryID != vs[0].MemoryID {
					t.Errorf("version %d of x.md is of another memory: the edit replaced the memory", i+1)
				}
			}
			if strings.Join(got, " ") != strings.Join(tr.want, " ") {
				t.Errorf("history of x.md %v, want %v", got, tr.want)
			}
			all, err := r.db.ListVersions(ctx, r.store, versions.VersionListOptions{Limit: versions.MaxPageSize})
			if err != nil {
				t.Fatal(err)
			}
			if len(all.Data) != len(vs) {
				t.Errorf("the store has %d versions, x.md %d: another file was saved", len(all.Data), len(vs))
			}
			if ps, _ := r.db.ListPending(ctx, r.store, r.eng.Owner.Mount, r.now.Add(grace)); len(ps) != 0 {
				t.Errorf("pending rows left: %d", len(ps))
			}
		})
	}
}
