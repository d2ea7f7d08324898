package fusefs

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// TestRedirectionOneVersionPerEdit runs the shells' redirections in a real
// mount: each `> f` is one version, and none is empty. The shell closes
// the descriptor it opened with O_TRUNC (moving it to 1) before the write;
// that close must not save the emptied file. The same scenario runs
// without a mount in internal/mirror (RedirectionTwice, ColonTruncates).
func TestRedirectionOneVersionPerEdit(t *testing.T) {
	shells := [][]string{{"bash", "-c"}, {"dash", "-c"}, {"busybox", "sh", "-c"}}
	forms := map[string]string{
		"echo":    "echo v1 > f.md; echo v2 > f.md",
		"cat":     "cat > f.md <<EOF\nv1\nEOF\ncat > f.md <<EOF\nv2\nEOF\n",
		"printf":  "printf 'v1\\n' > f.md; printf 'v2\\n' > f.md",
		"exec3":   "exec 3> f.md; echo v1 >&3; exec 3>&-; exec 3> f.md; echo v2 >&3; exec 3>&-",
		"builtin": "echo v1 > f.md && /bin/echo v2 > f.md",
	}
	e := newEnv(t)
	st := e.store(t, "Redirect")
	_, dir := e.mountStore(t, st, Options{})
	for _, sh := range shells {
		if _, err := exec.LookPath(sh[0]); err != nil {
			t.Errorf("%s is not installed: %v", sh[0], err)
			continue
		}
		for name, script := range forms {
			t.Run(sh[0]+"/"+name, func(t *testing.T) {
				sub, err := os.MkdirTemp(dir, sh[0]+"-"+name+"-")
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(sh[0], append(sh[1:], script)...)
				cmd.Dir = sub
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v: %s", script, err, out)
				}
				p := "/" + strings.TrimPrefix(sub, dir+"/") + "/f.md"
				m := e.memory(t, st.ID, p)
				vs := e.versionsOf(t, st.ID, m.ID)
				var got []string
				for i := len(vs) - 1; i >= 0; i-- {
					got = append(got, string(vs[i].Operation)+":"+*vs[i].Content)
				}
				if want := []string{"created:v1\n", "modified:v2\n"}; strings.Join(got, "|") != strings.Join(want, "|") {
					t.Errorf("%s %q made versions %q, want %q", sh[0], script, got, want)
				}
			})
		}
	}
	t.Run("colon", func(t *testing.T) {
		cmd := exec.Command("bash", "-c", "echo old > c.md; : > c.md")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		// The truncation is saved by the release, which the kernel sends
		// after close returns.
		m := e.memory(t, st.ID, "/c.md")
		var vs []versions.Version
		eventually(5*time.Second, func() error {
			vs = e.versionsOf(t, st.ID, m.ID)
			if len(vs) < 2 {
				return fmt.Errorf("%d versions", len(vs))
			}
			return nil
		})
		if len(vs) != 2 || *vs[0].Content != "" || vs[0].Operation != "modified" {
			t.Errorf("`: > f` made %s", ops(vs))
		}
	})
}
