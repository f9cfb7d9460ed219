#!/bin/sh
# atomlab load vs wrk, alternating, against one nginx with 1 worker that
# answers "ok" (the issue's target: atomlab's requests/s >= wrk's in one run).
# Usage: vs_wrk.sh [ATOMLAB] [ROUNDS]   (ATOMLAB defaults to target/release/atomlab)
set -eu
ATOMLAB=${1:-target/release/atomlab}
ROUNDS=${2:-3}
DIR=$(mktemp -d)
PORT=18181
cat > "$DIR/nginx.conf" <<CONF
daemon off; master_process on; worker_processes 1;
error_log $DIR/error.log; pid $DIR/nginx.pid;
events {}
http { access_log off; client_body_temp_path $DIR/cb; proxy_temp_path $DIR/px;
  fastcgi_temp_path $DIR/fc; uwsgi_temp_path $DIR/uw; scgi_temp_path $DIR/sc;
  server { listen 127.0.0.1:$PORT; location / { return 200 "ok\n"; } } }
CONF
/usr/sbin/nginx -p "$DIR" -c "$DIR/nginx.conf" &
NGINX=$!
trap 'kill -QUIT $NGINX; wait $NGINX; rm -rf "$DIR"' EXIT
sleep 0.5
URL=http://127.0.0.1:$PORT/
for r in $(seq 1 "$ROUNDS"); do
  for c in 16 128; do
    w=$(wrk -t1 -c$c -d5s "$URL" | awk '/Requests\/sec/ {print $2}')
    echo "round $r c=$c wrk -t1 -c$c -d5s: $w req/s"
    a=$("$ATOMLAB" --no-save load "$URL" --threads 1 --connections $c --duration 5 --warmup 0 --json 2>/dev/null \
      | python3 -c 'import json,sys; r=json.load(sys.stdin)["records"][0]; print("%.0f" % next(m["samples"][0] for m in r["metrics"] if m["name"]=="requests_per_sec"))')
    echo "round $r c=$c atomlab load --threads 1 --connections $c --duration 5 --warmup 0: $a req/s"
  done
done
