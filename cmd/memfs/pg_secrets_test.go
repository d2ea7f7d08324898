package main

import (
	"bytes"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memfs/memfs/versions/pgtest"
)

// withPassword is dsn with a password, and the password: the one dsn has,
// else a made-up one (the test server trusts local connections, so any
// password is accepted, and the point is where it shows up).
func withPassword(t *testing.T, dsn string) (string, string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Password != "" {
		return dsn, cfg.Password
	}
	const secret = "Pw-7f3e9a-Zq"
	if u, err := url.Parse(dsn); err == nil && strings.HasPrefix(dsn, "postgres") {
		u.User = url.UserPassword(u.User.Username(), secret)
		return u.String(), secret
	}
	return dsn + " password=" + secret, secret
}

// A password in the database URL is never logged or printed: the mount
// logs the server and database only, the CLI's errors name the server
// without it, and the command of memfs run can read it nowhere — nor can
// the host's other processes read it from a command line.
func TestPostgresSecrets(t *testing.T) {
	dsn := pgtest.Database(t)
	secretDSN, secret := withPassword(t, dsn)
	cfg, _ := pgx.ParseConfig(dsn)
	env := pgEnv(t, secretDSN)
	_, slug := env.createStore(t, "Secret Notes")

	t.Run("MountLog", func(t *testing.T) {
		mnt := mountDir(t)
		d := env.startMount(t, mnt, "--store", "Secret Notes")
		if err := os.WriteFile(filepath.Join(mnt, slug, "a.txt"), []byte("a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		d.stop(t, 15)
		log := d.stderr.String()
		if strings.Contains(log, secret) {
			t.Errorf("the mount's log holds the password:\n%s", log)
		}
		if !strings.Contains(log, cfg.Database) || !strings.Contains(log, cfg.Host) {
			t.Errorf("the mount's log does not name the server %s and database %s:\n%s", cfg.Host, cfg.Database, log)
		}
	})

	t.Run("CLIErrors", func(t *testing.T) {
		for _, db := range []string{
			"postgres://memfs:" + secret + "@127.0.0.1:1/nowhere?connect_timeout=5",
			"postgres://memfs:" + secret + "@127.0.0.1:notaport/nowhere",
			"host=127.0.0.1 port=1 user=memfs password=" + secret + " dbname=nowhere connect_timeout=5",
		} {
			for _, format := range []string{"text", "json"} {
				out, errs, code := env.run(t, "--db", db, "--format", format, "store", "list")
				if code == 0 {
					t.Errorf("store list on %s succeeded", db)
				}
				if strings.Contains(out+errs, secret) {
					t.Errorf("memfs --db %s store list printed the password: %s%s", db, out, errs)
				}
				if !strings.Contains(errs, "127.0.0.1") {
					t.Errorf("memfs --db %s store list: %q does not name the server", db, errs)
				}
			}
		}
	})

	t.Run("Run", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("memfs run needs root")
		}
		// The command looks for the password without holding it whole in
		// its own command line or environment.
		half := len(secret) / 2
		script := `p1='` + secret[:half] + `'; p2='` + secret[half:] + `'; s="$p1$p2"
env | grep -qF "$s" && echo LEAK env
for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do
	{ tr '\0' ' ' <"$f"; } 2>/dev/null | grep -qF "$s" && echo "LEAK $f"
done
env | grep -q '^MEMFS_DB=' && echo LEAK MEMFS_DB
env | grep -q '^PG' && echo LEAK PG variables
echo saved >"$MEMFS_MOUNT_ROOT/` + slug + `/run.txt"
sleep 2
echo done`
		// The command's unprivileged user must reach the mount root.
		dir := t.TempDir()
		for _, d := range []string{filepath.Dir(dir), dir} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		root := filepath.Join(dir, "memory")
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(memfsBin, "run", "--store", "Secret Notes", "--mount-root", root, "--", "sh", "-c", script)
		cmd.Env = append(env.environ(), "PGPASSWORD="+secret)
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Meanwhile, on the host: no command line holds the password.
		deadline := time.Now().Add(1500 * time.Millisecond)
		for time.Now().Before(deadline) {
			lines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, f := range lines {
				if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(secret)) {
					t.Errorf("%s holds the password: %q", f, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
					deadline = time.Time{}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("memfs run: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errs.String())
		}
		if strings.Contains(out.String(), "LEAK") || !strings.Contains(out.String(), "done") {
			t.Errorf("the command found the password or did not finish:\n%s", out.String())
		}
		if strings.Contains(errs.String(), secret) {
			t.Errorf("memfs run printed the password:\n%s", errs.String())
		}
		if got, _, _ := env.run(t, "memory", "get", "Secret Notes", "/run.txt"); got != "saved\n" {
			t.Errorf("the command's save through the mount reads %q; its output:\n%s\nmemfs run's:\n%s", got, out.String(), errs.String())
		}
	})
}
