"""Run a command on a pseudo-terminal and type keys into it, as a person
at an interactive editor would: typekeys.py DELAY KEYS CMD [ARG...]. KEYS is a
Python string literal; each chunk separated by the byte 0x00 is typed after
DELAY seconds, the first once the command has drawn its screen (an editor
slow to start under load would otherwise get keys before it has the
terminal). Exits with the command's status; its screen goes to stderr
when it fails."""
import ast, os, pty, select, sys, time

delay = float(sys.argv[1])
chunks = ast.literal_eval(sys.argv[2]).split("\0")
pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "xterm"
    os.execvp(sys.argv[3], sys.argv[3:])
screen = b""
def drain(t):
    global screen
    end = time.time() + t
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return False
            if not data:
                return False
            screen += data
    return True
deadline = time.time() + 40
while not screen and time.time() < deadline and drain(0.1):
    pass
for c in chunks:
    if not drain(delay):
        break
    os.write(fd, c.encode())
deadline = time.time() + 40
while time.time() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    drain(0.1)
else:
    os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status)
if code != 0:
    sys.stderr.write(screen.decode(errors="replace")[-3000:])
sys.exit(code)
