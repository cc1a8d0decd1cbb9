#!/usr/bin/env bash
# `npm run package`: the bundles (turbo's cached build) and then, with Debian's own dpkg-deb,
#   dist/packages/tern-agent_<version>_all.deb   the edge agent for routers
#   dist/packages/tern-server_<version>_all.deb  the management server
# Versions come from apps/agent/package.json and apps/server/package.json (TERN_PACKAGE_VERSION overrides both).
# Both run on the system's nodejs (>= 20): the bundles are plain JavaScript. The agent's bundle needs no
# node_modules; the server keeps @electric-sql/pglite as files (it loads its wasm and data beside its module).
# Lintian checks them when it is installed (an error fails the build).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${TERN_PACKAGE_OUT:-$root/dist/packages}
export TURBO_TELEMETRY_DISABLED=1 TURBO_NO_UPDATE_NOTIFIER=1
command -v dpkg-deb >/dev/null || { echo "npm run package: needs dpkg-deb (Debian's dpkg)" >&2; exit 1; }

# The web console (apps/console, when the checkout has it with a build script) goes into tern-server.
console_name=$(node -e "try { const p = require('./apps/console/package.json'); console.log(p.scripts && p.scripts.build ? p.name : ''); } catch { console.log(''); }")
npx turbo run build --filter=@tern/agent --filter=@tern/server ${console_name:+--filter=$console_name} \
  --output-logs=errors-only --log-prefix=none
stage=$(mktemp -d /tmp/tern-package.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out"
# Only this build's packages in $out: CI installs them by glob, and a machine may hold an older version's.
rm -f "$out"/tern-agent_*_all.deb "$out"/tern-server_*_all.deb

version_of() { TERN_PACKAGE_VERSION=${TERN_PACKAGE_VERSION:-} node -p "process.env.TERN_PACKAGE_VERSION || require('./$1/package.json').version"; }

# The app's bin and bundle under /usr/lib/<package>, /usr/bin/<package> pointing at the bin.
install_app() { # <package> <app dir> <version>
  local pkg=$1 app=$2 version=$3 lib=$stage/$1/usr/lib/$1
  install -d "$lib/bin" "$lib/dist" "$stage/$pkg/usr/bin"
  # Debian's node is /usr/bin/node: one interpreter argument at most, so no `env -S` (lintian: unusual-interpreter).
  { sed -E '1s|^#!/usr/bin/env( -S)? node|#!/usr/bin/node|' "$app/bin/$pkg"; } >"$lib/bin/$pkg"
  chmod 0755 "$lib/bin/$pkg"
  cp -r "$app/dist/." "$lib/dist/"
  rm -f "$lib/dist/meta.json"
  # The bin and the bundle are ES modules: node needs "type": "module" beside them.
  printf '{ "name": "%s", "version": "%s", "private": true, "type": "module" }\n' "$pkg" "$version" >"$lib/package.json"
  ln -s "../lib/$pkg/bin/$pkg" "$stage/$pkg/usr/bin/$pkg"
}

install_doc() { # <package> <version> <files…>
  local pkg=$1 version=$2 doc=$stage/$1/usr/share/doc/$1
  shift 2
  install -d "$doc"
  sed "s/@PACKAGE@/$pkg/g" packaging/copyright >"$doc/copyright"
  for f in "$@"; do install -m 0644 "$f" "$doc/"; done
  install -D -m 0644 "packaging/$pkg/lintian-overrides" "$stage/$pkg/usr/share/lintian/overrides/$pkg"
  printf '%s (%s) unstable; urgency=medium\n\n  * Built from the Tern repository (%s).\n\n -- Tern maintainers <maintainers@tern.invalid>  %s\n' \
    "$pkg" "$version" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$(date -R)" | gzip -9n >"$doc/changelog.gz"
}

finish() { # <package> <version>: DEBIAN/ from packaging/<package>/, then dpkg-deb
  local pkg=$1 version=$2 dir=$stage/$1
  install -d "$dir/DEBIAN"
  for s in postinst prerm postrm; do install -m 0755 "packaging/$pkg/$s" "$dir/DEBIAN/$s"; done
  install -m 0644 "packaging/$pkg/conffiles" "$dir/DEBIAN/conffiles"
  local size
  size=$(du -sk --exclude=DEBIAN "$dir" | cut -f1)
  sed -e "s/@VERSION@/$version/" -e "s/@SIZE@/$size/" "packaging/$pkg/control" >"$dir/DEBIAN/control"
  (cd "$dir" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | sort | xargs -d '\n' md5sum) >"$dir/DEBIAN/md5sums"
  dpkg-deb --root-owner-group -Zxz --build "$dir" "$out/${pkg}_${version}_all.deb" >/dev/null
  echo "built $out/${pkg}_${version}_all.deb"
}

# tern-agent
version=$(version_of apps/agent)
install_app tern-agent apps/agent "$version"
d=$stage/tern-agent
# The launcher's upgrade part (the rollback guard and the choice of an upgraded version: docs/upgrades.md).
install -m 0644 apps/agent/bin/upgrade-launch.mjs "$d/usr/lib/tern-agent/bin/upgrade-launch.mjs"
install -D -m 0644 apps/agent/systemd/tern-agent.service "$d/lib/systemd/system/tern-agent.service"
install -D -m 0644 packaging/tern-agent/agent.yaml "$d/etc/tern/agent.yaml"
install -D -m 0644 packaging/tern-agent/teardown-config.json "$d/usr/share/tern-agent/teardown-config.json"
install -d -m 0700 "$d/var/lib/tern-agent"
install_doc tern-agent "$version" docs/agent.md docs/install.md
finish tern-agent "$version"

# tern-server
version=$(version_of apps/server)
install_app tern-server apps/server "$version"
d=$stage/tern-server
# The directory of the package the server resolves (its package.json is not exported: walk up from its entry).
pglite=$(node -e "
  const fs = require('node:fs'), path = require('node:path');
  let dir = path.dirname(require.resolve('@electric-sql/pglite', { paths: ['apps/server'] }));
  while (!fs.existsSync(path.join(dir, 'package.json')) || require(path.join(dir, 'package.json')).name !== '@electric-sql/pglite') dir = path.dirname(dir);
  console.log(dir);")
install -d "$d/usr/lib/tern-server/node_modules/@electric-sql"
cp -r "$pglite" "$d/usr/lib/tern-server/node_modules/@electric-sql/pglite"
# The API docs page (GET /api/docs) serves Swagger UI's own files from swagger-ui-dist (http/docs-ui): only
# the files it serves, its package.json (how it finds them) and its licence.
swagger=$(node -p "require('node:path').dirname(require.resolve('swagger-ui-dist/package.json', { paths: ['apps/server'] }))")
install -d "$d/usr/lib/tern-server/node_modules/swagger-ui-dist"
for f in package.json LICENSE NOTICE swagger-ui.css swagger-ui-bundle.js favicon-32x32.png; do
  install -m 0644 "$swagger/$f" "$d/usr/lib/tern-server/node_modules/swagger-ui-dist/$f"
done
# The web console's build, served at / (the server looks for it in console/ beside its dist/: http/console).
if [ -n "$console_name" ] && [ -f apps/console/dist/index.html ]; then
  install -d "$d/usr/lib/tern-server/console"
  cp -r apps/console/dist/. "$d/usr/lib/tern-server/console/"
  find "$d/usr/lib/tern-server/console" -name '*.map' -delete
  find "$d/usr/lib/tern-server/console" -type d -exec chmod 0755 {} + -o -type f -exec chmod 0644 {} +
fi
find "$d/usr/lib/tern-server/node_modules" \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.cts' \) -delete
install -D -m 0644 packaging/tern-server/tern-server.service "$d/lib/systemd/system/tern-server.service"
install -D -m 0644 packaging/tern-server/sysctl.conf "$d/usr/lib/sysctl.d/60-tern-server.conf"
install -D -m 0640 packaging/tern-server/server.env "$d/etc/tern/server.env"
install_doc tern-server "$version" docs/server.md docs/install.md
finish tern-server "$version"

# Lintian when it is installed (CI installs it): an error fails the build, warnings are printed.
if command -v lintian >/dev/null; then
  lintian --fail-on error --tag-display-limit 0 "$out/tern-agent_$(version_of apps/agent)_all.deb" \
    "$out/tern-server_$(version_of apps/server)_all.deb"
fi
