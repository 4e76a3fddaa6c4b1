#!/usr/bin/env bash
# The production install, as README "Deploy" gives it: the built dist/ and the lock file in a
# fresh folder, `npm ci --omit=dev` (no test, lint or build tools), then `npm run serve`. Checks
# that the site answers a page and a contact post, then stops it. Run after `npm run build`.
set -euo pipefail
cd "$(dirname "$0")/.."
test -f dist/server/start.mjs || { echo "Build first: npm run build" >&2; exit 1; }

dir=$(mktemp -d)
# The server runs in its own process group (setsid), so that npm and the node it starts stop together.
trap 'kill -- "-${server:-0}" 2>/dev/null || true; rm -rf "$dir"' EXIT
cp package.json package-lock.json "$dir/"
# The starter depends on the forms package through its workspace: its folder comes along.
mkdir -p "$dir/packages" && cp -r packages/site-forms "$dir/packages/site-forms"
cp -r dist "$dir/dist"
(cd "$dir" && npm ci --omit=dev --no-audit --no-fund --loglevel=error >/dev/null)
echo "production node_modules: $(du -sm "$dir/node_modules" | cut -f1) MB"

port=$(npx node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
(cd "$dir" && ENV_FILE= HOST=127.0.0.1 PORT="$port" DATA_DIR="$dir/data" exec setsid npm run --silent serve >"$dir/server.log" 2>&1) &
server=$!
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/api/health" >/dev/null 2>&1 && break
  sleep 0.2
done
page=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/")
post=$(curl -s -o /dev/null -w '%{http_code}' -F name='Ada Lovelace' -F email=ada@example.com -F message='Hello from the production install.' "http://127.0.0.1:$port/api/contact")
echo "production install: page $page, contact post $post"
if [ "$page" != 200 ] || [ "$post" != 200 ]; then
  cat "$dir/server.log" >&2
  exit 1
fi
