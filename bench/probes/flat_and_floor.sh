# Sourced by the probes that time an example's flat code and its floor in one process.
# flat_and_floor BIN ARGS...: runs BIN ARGS --reps 10 (60 s at most) and prints "flat_ms,floor_ms,verified" from its
# result lines (impl=flat, impl=cdp).
flat_and_floor() {
  local bin=$1; shift
  local o; o=$(timeout 60 "$bin" "$@" --reps 10 2>/dev/null)
  local f c v
  f=$(echo "$o" | grep "impl=flat " | grep -o "time_ms=[0-9.]*" | cut -d= -f2)
  c=$(echo "$o" | grep "impl=cdp " | grep -o "time_ms=[0-9.]*" | cut -d= -f2)
  v=$(echo "$o" | grep "impl=cdp " | grep -o "verified=[a-z]*" | cut -d= -f2)
  echo "$f,$c,${v:-none}"
}
