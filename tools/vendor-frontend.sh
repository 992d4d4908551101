#!/usr/bin/env bash
# Re-creates static/vendor/ from the npm registry, reproducibly.
#
# This file is the recipe for every third-party browser asset the console
# ships: which npm package, which exact version (with its pinned tarball
# integrity), and which files of it are kept and where.  Nothing else goes
# into static/vendor/: the directory is rebuilt from scratch on every run,
# together with its README.md (library table) and SHA256SUMS.
#
# Usage:
#   tools/vendor-frontend.sh            rebuild static/vendor/ in place
#   tools/vendor-frontend.sh --check    rebuild into a temp dir and compare it
#                                       with the committed static/vendor/
#                                       (exit 1 on any difference)
#   tools/vendor-frontend.sh --out DIR  rebuild into DIR instead
#
# Needs: bash, npm (and its node), tar, sha256sum, diff.  Network: only the
# npm registry (through `npm pack`).  Nothing is left behind: tarballs and
# extracted packages live in a temp dir that is removed on exit; no
# node_modules is created.
#
# To bump a library: change its version and integrity below (get the
# integrity with `npm view NAME@VERSION dist.integrity`), adjust the file
# list if the package layout changed, run this script, and review the diff.

set -euo pipefail
export LC_ALL=C

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
VENDOR_DIR="$REPO_ROOT/static/vendor"

MODE=build
OUT_DIR="$VENDOR_DIR"
while [ $# -gt 0 ]; do
  case "$1" in
    --check) MODE=check; shift ;;
    --out) OUT_DIR="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

for tool in npm node tar sha256sum diff; do
  command -v "$tool" >/dev/null 2>&1 || { echo "error: '$tool' is required" >&2; exit 1; }
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/vendor-frontend.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
STAGE="$WORK/stage"          # the new static/vendor/ is assembled here
mkdir -p "$STAGE" "$WORK/tgz" "$WORK/src"

log() { printf '%s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

# fetch PKG VERSION INTEGRITY -> sets $PKG_DIR to the extracted package/ dir.
fetch() {
  local pkg="$1" ver="$2" want="$3" out tgz got
  log "==> npm pack $pkg@$ver"
  out="$(cd "$WORK/tgz" && npm pack "$pkg@$ver" --silent 2>"$WORK/npm.err")" \
    || { cat "$WORK/npm.err" >&2; die "npm pack $pkg@$ver failed"; }
  tgz="$WORK/tgz/$(printf '%s\n' "$out" | tail -n 1)"
  [ -f "$tgz" ] || die "npm pack $pkg@$ver produced no tarball ($out)"
  got="sha512-$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tgz")"
  [ "$got" = "$want" ] || die "integrity mismatch for $pkg@$ver: got $got, pinned $want"
  PKG_DIR="$WORK/src/$pkg@$ver"
  mkdir -p "$PKG_DIR"
  tar -xzf "$tgz" -C "$PKG_DIR" --no-same-owner --no-same-permissions \
      --warning=no-unknown-keyword 2>/dev/null \
    || tar -xzf "$tgz" -C "$PKG_DIR" --no-same-owner
  PKG_DIR="$PKG_DIR/package"
  [ -f "$PKG_DIR/package.json" ] || die "$pkg@$ver: no package/package.json in tarball"
  # The declared version must be the one we asked for.
  local declared
  declared="$(node -e 'process.stdout.write(require(process.argv[1]).version)' "$PKG_DIR/package.json")"
  # (admin-lte 2.4.18 writes "v2.4.18" there.)
  [ "${declared#v}" = "$ver" ] || die "$pkg@$ver: package.json says $declared"
}

# keep LIB SRC [DST]: copy $PKG_DIR/SRC to $STAGE/LIB/DST (DST defaults to SRC).
keep() {
  local lib="$1" src="$2" dst="${3:-$2}"
  [ -f "$PKG_DIR/$src" ] || die "$lib: missing $src in package"
  install -D -m 0644 "$PKG_DIR/$src" "$STAGE/$lib/$dst"
}

# license_field: prints package.json's license/licenses field, as JSON.
license_field() {
  node -e 'const p=require(process.argv[1]);process.stdout.write(JSON.stringify(p.license||p.licenses||null))' \
    "$PKG_DIR/package.json"
}

# The MIT licence text, taken verbatim from jQuery's LICENSE.txt (all lines
# from "Permission is hereby granted" on).  Filled in by the jquery step.
MIT_TEXT_FILE="$WORK/mit.txt"

# gen_license LIB PKG VERSION SPDX NOTICE_FILE [mit]
# For packages that ship no licence file: writes LIB/LICENSE.txt with the
# package.json licence field, the licence notice the package does ship
# (verbatim), and, for MIT, the standard MIT permission text.
gen_license() {
  local lib="$1" pkg="$2" ver="$3" spdx="$4" notice="$5" mit="${6:-}"
  local f="$STAGE/$lib/LICENSE.txt"
  mkdir -p "$STAGE/$lib"
  {
    printf 'The npm package %s@%s ships no licence file.\n' "$pkg" "$ver"
    printf 'This file was written by tools/vendor-frontend.sh from the package itself.\n\n'
    printf 'package.json licence field: %s\n' "$(license_field)"
    printf 'SPDX expression used here:  %s\n\n' "$spdx"
    printf 'Licence notice shipped in the package (verbatim):\n\n'
    cat "$notice"
    if [ -n "$mit" ]; then
      printf '\nThe MIT License permission text referred to above:\n\n'
      cat "$MIT_TEXT_FILE"
    fi
  } > "$f"
  chmod 0644 "$f"
}

# Metadata for README.md: one line per library.
META="$WORK/meta.tsv"
: > "$META"
# meta LIB DISPLAY_NAME VERSION NPM_SPEC SPDX NOTE
meta() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$META"; }

# ---------------------------------------------------------------------------
# the libraries (versions as used by the xxl-job-admin 2.4.2 console where
# npm has them)
# ---------------------------------------------------------------------------

# jQuery
fetch jquery 3.4.1 'sha512-36+AdBzCL+y6qjw5Tx7HgzeGCzC81MDDgaUP8ld2zhx58HdqXGoBd+tHdrBMiyjGQs0Hxs/MLZTu/eHNJJuWPw=='
keep jquery dist/jquery.min.js jquery.min.js
keep jquery LICENSE.txt
sed -n '/^Permission is hereby granted/,$p' "$PKG_DIR/LICENSE.txt" | tr -d '\r' > "$MIT_TEXT_FILE"
[ -s "$MIT_TEXT_FILE" ] || die "could not extract MIT text from jquery LICENSE.txt"
meta jquery jQuery 3.4.1 jquery@3.4.1 MIT ''

# Bootstrap 3
fetch bootstrap 3.4.1 'sha512-yN5oZVmRCwe5aKwzRj6736nSmKDX7pLYwsXiCj/EYmo16hODaBiT4En5btW/jhBF/seV+XMx3aYwukYC3A49DA=='
keep bootstrap dist/css/bootstrap.min.css css/bootstrap.min.css
keep bootstrap dist/js/bootstrap.min.js js/bootstrap.min.js
for ext in eot svg ttf woff woff2; do
  keep bootstrap "dist/fonts/glyphicons-halflings-regular.$ext" "fonts/glyphicons-halflings-regular.$ext"
done
keep bootstrap LICENSE
meta bootstrap Bootstrap 3.4.1 bootstrap@3.4.1 MIT 'bootstrap.min.css ends with a sourceMappingURL comment; the map is not kept (only dev tools ask for it).'

# AdminLTE 2
fetch admin-lte 2.4.18 'sha512-AfIdoUWdbQA0OmW7PnP8GJ3u6RMKNXefN3DRTBHCQXd7VeyJahUfZWtV62ppDxcdjpx0L08ypPV55ARmdGdOIw=='
keep admin-lte dist/css/AdminLTE.min.css css/AdminLTE.min.css
keep admin-lte dist/css/skins/_all-skins.min.css css/skins/_all-skins.min.css
keep admin-lte dist/js/adminlte.min.js js/adminlte.min.js
keep admin-lte LICENSE
meta admin-lte AdminLTE 2.4.18 admin-lte@2.4.18 MIT 'CSS uses the "Source Sans Pro" font but does not load it (the Java console did not either); browsers fall back to Helvetica Neue/Arial.'

# Font Awesome 4
fetch font-awesome 4.7.0 'sha512-U6kGnykA/6bFmg1M/oT9EkFeIYv7JlX3bozwQJWiiLz6L0w3F5vBVPxHlwyX/vtNq1ckcpRKOB9f2Qal/VtFpg=='
keep font-awesome css/font-awesome.min.css
for ext in eot svg ttf woff woff2; do
  keep font-awesome "fonts/fontawesome-webfont.$ext"
done
sed -n '/^## License/,/^## Changelog/p' "$PKG_DIR/README.md" | sed '$d' > "$WORK/fa-notice.txt"
[ -s "$WORK/fa-notice.txt" ] || die "font-awesome: licence section not found in README.md"
gen_license font-awesome font-awesome 4.7.0 '(OFL-1.1 AND MIT)' "$WORK/fa-notice.txt" mit
meta font-awesome 'Font Awesome' 4.7.0 font-awesome@4.7.0 '(OFL-1.1 AND MIT)' 'No licence file in the package: LICENSE.txt is generated from package.json + the README licence section (fonts: OFL-1.1, CSS: MIT). FontAwesome.otf is not kept (the CSS does not use it).'

# Ionicons 2
fetch ionicons 2.0.1 'sha512-ySWjaL3PxB4JFMvr7/02sByWM7TQv1mrvRYFvUwFcVEEHEK/RKEP6MFhcnTmKhoPM6Ih6s5wH003fkVk1wiXLQ=='
keep ionicons css/ionicons.min.css
for ext in eot svg ttf woff; do
  keep ionicons "fonts/ionicons.$ext"
done
keep ionicons LICENSE
meta ionicons Ionicons 2.0.1 ionicons@2.0.1 MIT 'The CSS banner says v2.0.0; the npm package and the font URLs say 2.0.1.'

# DataTables 1.10 + Bootstrap 3 styling
fetch datatables.net 1.10.19 'sha512-+ljXcI6Pj3PTGy5pesp3E5Dr3x3AV45EZe0o1r0gKENN2gafBKXodVnk2ypKwl2tTmivjxbkiqoWnipTefyBTA=='
keep datatables.net js/jquery.dataTables.min.js
keep datatables.net License.txt
meta datatables.net DataTables 1.10.19 datatables.net@1.10.19 MIT ''

fetch datatables.net-bs 1.10.19 'sha512-5gxoI2n+duZP06+4xVC2TtH6zcY369/TRKTZ1DdSgDcDUl4OYQsrXCuaLJmbVzna/5Y5lrMmK7CxgvYgIynICA=='
keep datatables.net-bs css/dataTables.bootstrap.min.css
keep datatables.net-bs js/dataTables.bootstrap.min.js
keep datatables.net-bs License.txt
meta datatables.net-bs 'DataTables Bootstrap 3 integration' 1.10.19 datatables.net-bs@1.10.19 MIT 'Load after datatables.net; sort icons use the Bootstrap glyphicon font.'

# ECharts 4
fetch echarts 4.1.0 'sha512-gP1e1fNnAj9KJpTDLXV21brklbfJlqeINmpQDJCDta9TX3cPoqyQOiDVcEPzbOVHqgBRgTOwNxC5iGwJ89014A=='
keep echarts dist/echarts.min.js echarts.min.js
keep echarts LICENSE
keep echarts NOTICE
keep echarts licenses/LICENSE-zrender
keep echarts licenses/LICENSE-d3
meta echarts 'Apache ECharts' 4.1.0 echarts@4.1.0 Apache-2.0 'Full build (the Java console used the smaller echarts.common.min.js of the same version). Contains BSD-3-Clause code (zrender, d3): see NOTICE and licenses/. package.json has no license field; the LICENSE file is Apache-2.0.'

# Cytoscape.js and its dagre layout, for the workflow graphs (canvas-drawn: hundreds of nodes stay responsive)
fetch cytoscape 3.35.0 'sha512-sMvBIXiGMnhkCaWz2R06FwF/27MNlS+Tqvi17foO9UhnUg3XGZccKjxsvEqQFAQYMSSZmN5SxYzUYlQ0DOJJ3g=='
keep cytoscape dist/cytoscape.min.js cytoscape.min.js
keep cytoscape LICENSE
meta cytoscape 'Cytoscape.js' 3.35.0 cytoscape@3.35.0 MIT 'Not in the Java console: draws the workflow editor, run view and job dependency graph.'

fetch cytoscape-dagre 4.0.1 'sha512-hyNdh8Vp1nwzBcjHnM4c71G81bFhPmQYLXD2HM9AZIvl+8TrMzWEOPW45hF/XOBQiEguPcDQzi6VrXR1XBcXOA=='
keep cytoscape-dagre dist/cytoscape-dagre.min.js cytoscape-dagre.min.js
keep cytoscape-dagre LICENSE
meta cytoscape-dagre 'cytoscape-dagre' 4.0.1 cytoscape-dagre@4.0.1 MIT 'Bundles the dagre layered layout (MIT) it needs; load after cytoscape.min.js, which it registers with by itself.'

# CodeMirror 5 (ships unminified sources only)
fetch codemirror 5.41.0 'sha512-mkCwbneCx2WHg1MNCYrI+8Zuq0KMMaZ5yTFpQlAZazy3yxME8bHcuSc9WUFzgPZ114WqWu1FIHlx8CavLzBDIg=='
for f in lib/codemirror.js lib/codemirror.css \
         addon/hint/show-hint.js addon/hint/show-hint.css addon/hint/anyword-hint.js \
         addon/selection/active-line.js addon/edit/matchbrackets.js \
         theme/idea.css; do
  keep codemirror "$f"
done
# php needs htmlmixed + clike; htmlmixed needs xml, javascript, css.
for m in clike shell python php htmlmixed xml javascript css powershell; do
  keep codemirror "mode/$m/$m.js"
done
keep codemirror LICENSE
meta codemirror CodeMirror 5.41.0 codemirror@5.41.0 MIT 'The package ships no minified files. Load order for PHP: xml, javascript, css, htmlmixed, clike, php.'

# Moment 2 (+ Chinese locales)
fetch moment 2.24.0 'sha512-bV7f+6l2QigeBBZSM/6yTNq4P2fNpSWj/0e7jQcy87A8e7o2nAfP/34/2ky5Vw4B9S446EtIhodAzkFCcR4dQg=='
keep moment min/moment.min.js moment.min.js
keep moment locale/zh-cn.js
keep moment locale/zh-tw.js
keep moment LICENSE
meta moment Moment.js 2.24.0 moment@2.24.0 MIT 'Locales are the package'"'"'s (unminified) locale/*.js; load after moment.min.js.'

# Date range picker 2 (works with jQuery 3 + moment 2; needs moment loaded first)
fetch bootstrap-daterangepicker 2.1.27 'sha512-VutNHszlzCNDoSl2IZ8AaPcu1pFZS7HMlDQdK8nxPryDFro8mKqjar+iueb1Yz/3DOYNTtS4YOAX7UrdwiD7xA=='
keep bootstrap-daterangepicker daterangepicker.js
keep bootstrap-daterangepicker daterangepicker.css
sed -n '1,/^\*\//p' "$PKG_DIR/daterangepicker.js" > "$WORK/drp-notice.txt"
gen_license bootstrap-daterangepicker bootstrap-daterangepicker 2.1.27 MIT "$WORK/drp-notice.txt" mit
meta bootstrap-daterangepicker 'Date Range Picker' 2.1.27 bootstrap-daterangepicker@2.1.27 MIT 'No licence file in the package: LICENSE.txt is generated from package.json + the licence header of daterangepicker.js. The package ships no minified JS.'

# jQuery Validation 1
fetch jquery-validation 1.18.0 'sha512-+MK0pvoegfLrJnwtCU6tx305Vgp9HWevpmdVwDf5TthmINkn0wqqLD0bpa75EERlHsBBjMmza//ppx5ZQPnW3Q=='
keep jquery-validation dist/jquery.validate.min.js jquery.validate.min.js
keep jquery-validation dist/additional-methods.min.js additional-methods.min.js
keep jquery-validation LICENSE.md
meta jquery-validation 'jQuery Validation Plugin' 1.18.0 jquery-validation@1.18.0 MIT 'No message localisations kept (the console sets its own messages).'

# iCheck 1.0 (square/blue skin only)
fetch icheck 1.0.2 'sha512-1oDqj9ikiH4csFWKZnfbD1S9IY/MqzEt4cir6PIfkT84D/8QYaAZFrplXoyz5eaATmaoawY3KMTkMAO+fP4wGg=='
keep icheck icheck.min.js
keep icheck skins/square/blue.css
keep icheck skins/square/blue.png
keep icheck skins/square/blue@2x.png
head -n 1 "$PKG_DIR/icheck.min.js" > "$WORK/icheck-notice.txt"
gen_license icheck icheck 1.0.2 MIT "$WORK/icheck-notice.txt" mit
meta icheck iCheck 1.0.2 icheck@1.0.2 MIT 'No licence file in the package: LICENSE.txt is generated from package.json + the banner of icheck.min.js. 1.0.2 is the only version on npm (the Java console had 1.0.1).'

# jquery.cookie 1.4.1 (ships unminified only)
fetch jquery.cookie 1.4.1 'sha512-c/hZOOL+8VSw/FkTVH637gS1/6YzMSCROpTZ2qBYwJ7s7sHajU7uBkSSiE5+GXWwrfCCyO+jsYjUQ7Hs2rIxAA=='
keep jquery.cookie jquery.cookie.js
keep jquery.cookie MIT-LICENSE.txt
meta jquery.cookie 'jQuery Cookie' 1.4.1 jquery.cookie@1.4.1 MIT 'Unmaintained upstream (superseded by js-cookie) but stable; the package ships no minified file.'

# PACE 1.0 (blue flash theme only)
fetch pace-js 1.0.2 'sha512-5rIBZm4u7xQz2eYWwatBfUnurKxXRyO6meLvlxhQYyhJZoZDjvLt249nUikj9VMpmtMR0owHqade9RSSNRT/GQ=='
keep pace-js pace.min.js
keep pace-js themes/blue/pace-theme-flash.css
keep pace-js LICENSE
meta pace-js PACE 1.0.2 pace-js@1.0.2 MIT ''

# FastClick 1.0.6 (ships unminified only)
fetch fastclick 1.0.6 'sha512-cXyDBT4g0uWl/Xe75QspBDAgAWQ0lkPi/zgp6YFEUHj6WV6VIZl7R6TiDZhdOVU3W4ehp/8tG61Jev1jit+ztQ=='
keep fastclick lib/fastclick.js fastclick.js
keep fastclick LICENSE
meta fastclick FastClick 1.0.6 fastclick@1.0.6 MIT 'The package ships no minified file.'

# slimScroll 1.3.8
fetch jquery-slimscroll 1.3.8 'sha512-3cNGNCq6i3b+rZQOx1tSBlSFewk4X35eUuQmoRVSA4MSytw3rGPvCw6cEB2oEHf+u15RVzgfh4hN+/3dDNzwiQ=='
keep jquery-slimscroll jquery.slimscroll.min.js
sed -n '1,/^ \*\//p' "$PKG_DIR/jquery.slimscroll.min.js" > "$WORK/slim-notice.txt"
gen_license jquery-slimscroll jquery-slimscroll 1.3.8 'MIT' "$WORK/slim-notice.txt" mit
meta jquery-slimscroll slimScroll 1.3.8 jquery-slimscroll@1.3.8 MIT 'Dual-licensed "MIT and GPL" by its author; used here under MIT. No licence file in the package: LICENSE.txt is generated from package.json + the banner of jquery.slimscroll.min.js.'

# layer 3.1.1: the standalone "layer" dialog/toast library, which its author
# publishes on npm only inside the layui source package (release/layer/dist).
fetch layui-src 2.4.5 'sha512-dPaMlKaq6nip9c8GoJccnVatN39k8I/p3UtqPvMX+TZKsAp6nGpysE7UZb5rvqGpZaL6ESqFqkmrwHj7BijLlA=='
grep -q 'layer-v3.1.1' "$PKG_DIR/release/layer/dist/layer.js" || die "layui-src: release/layer/dist/layer.js is not layer 3.1.1"
keep layer release/layer/dist/layer.js layer.js
for f in layer.css icon.png icon-ext.png loading-0.gif loading-1.gif loading-2.gif; do
  keep layer "release/layer/dist/theme/default/$f" "theme/default/$f"
done
keep layer release/layer/LICENSE LICENSE
meta layer layer 3.1.1 layui-src@2.4.5 MIT 'Taken from release/layer/dist/ of the layui-src package (layer'"'"'s own MIT LICENSE from release/layer/). layer.js loads theme/default/layer.css by itself, relative to its own URL, so keep this layout.'

# ---------------------------------------------------------------------------
# checks on the staged tree
# ---------------------------------------------------------------------------

# Every url(...) / @import in every kept CSS file must point to a file that
# exists in the tree (query strings and #fragments ignored); data: URIs are
# fine; absolute/external URLs are errors.
check_css_urls() {
  local root="$1" bad=0 css ref path refs=0
  while IFS= read -r -d '' css; do
    while IFS= read -r ref; do
      [ -n "$ref" ] || continue
      refs=$((refs + 1))
      case "$ref" in
        data:*) continue ;;
        http:*|https:*|//*|/*) log "CSS $css: external/absolute URL $ref"; bad=1; continue ;;
      esac
      path="${ref%%\?*}"; path="${path%%#*}"
      if [ ! -f "$(dirname "$css")/$path" ]; then
        log "CSS ${css#"$root"/}: missing $ref"; bad=1
      fi
    done < <(
      { grep -o 'url([^)]*)' "$css" | sed -e 's/^url(//' -e 's/)$//'
        grep -o '@import *["'"'"'][^"'"'"']*["'"'"']' "$css" | sed -e 's/^@import *//'
      } | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e 's/^["'"'"']//' -e 's/["'"'"']$//'
    )
  done < <(find "$root" -type f -name '*.css' -print0 | sort -z)
  [ "$bad" = 0 ] || die "CSS url() check failed"
  log "CSS url() check: $refs references, all resolve"
}

# No source maps, no unminified leftovers we did not choose, no packaging junk.
check_no_junk() {
  local root="$1" junk
  junk="$(find "$root" -type f \( -name '*.map' -o -name 'package.json' -o -name '*.tgz' \
            -o -name '*.md' -a ! -name 'README.md' -a ! -name 'LICENSE.md' \) -print)"
  [ -z "$junk" ] || die "unexpected files in vendor tree: $junk"
  [ ! -e "$root/node_modules" ] || die "node_modules in vendor tree"
}

check_css_urls "$STAGE"
check_no_junk "$STAGE"

# ---------------------------------------------------------------------------
# README.md and SHA256SUMS
# ---------------------------------------------------------------------------

human_size() { awk -v b="$1" 'BEGIN { if (b >= 1048576) printf "%.2f MiB", b/1048576; else printf "%.1f KiB", b/1024 }'; }

write_readme() {
  local f="$STAGE/README.md" lib name ver spec spdx note files size total
  total="$(find "$STAGE" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}')"
  {
    cat <<'EOF'
# Third-party front-end libraries

Generated by `tools/vendor-frontend.sh` — do not edit by hand; change the
script and re-run it (`tools/vendor-frontend.sh --check` verifies that this
directory is exactly what the script produces).

Every file here comes unmodified from the npm tarball of the package and
version listed below (tarball integrity is pinned in the script); only the
files a browser needs are kept, plus each package's licence. Where a package
ships no licence file, `LICENSE.txt` is generated from its `package.json`
licence field and the licence notice the package itself carries (noted below).
The versions are those of the xxl-job-admin 2.4.2 console where npm has them.

| Library | Version | npm package | Licence (SPDX) | Files kept (under `static/vendor/<dir>/`) | Size |
| --- | --- | --- | --- | --- | --- |
EOF
    while IFS=$'\t' read -r lib name ver spec spdx note; do
      files="$(cd "$STAGE/$lib" && find . -type f -printf '%P\n' | sort | sed 's/.*/`&`/' | paste -sd ',' - | sed 's/,/, /g')"
      size="$(find "$STAGE/$lib" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}')"
      printf '| %s (`%s/`) | %s | `%s` | %s | %s | %s |\n' "$name" "$lib" "$ver" "$spec" "$spdx" "$files" "$(human_size "$size")"
    done < "$META"
    printf '\nTotal size of the vendored files (excluding this README and SHA256SUMS): %s.\n' "$(human_size "$total")"
    cat <<'EOF'

## Notes

EOF
    while IFS=$'\t' read -r lib name ver spec spdx note; do
      [ -n "$note" ] && printf -- '- **%s**: %s\n' "$name" "$note"
    done < "$META"
    cat <<'EOF'

## Entry points

```html
<!-- every page -->
<link rel="stylesheet" href="static/vendor/bootstrap/css/bootstrap.min.css">
<link rel="stylesheet" href="static/vendor/font-awesome/css/font-awesome.min.css">
<link rel="stylesheet" href="static/vendor/ionicons/css/ionicons.min.css">
<link rel="stylesheet" href="static/vendor/admin-lte/css/AdminLTE.min.css">
<link rel="stylesheet" href="static/vendor/admin-lte/css/skins/_all-skins.min.css">
<link rel="stylesheet" href="static/vendor/pace-js/themes/blue/pace-theme-flash.css">
<script src="static/vendor/jquery/jquery.min.js"></script>
<script src="static/vendor/bootstrap/js/bootstrap.min.js"></script>
<script src="static/vendor/fastclick/fastclick.js"></script>
<script src="static/vendor/admin-lte/js/adminlte.min.js"></script>
<script src="static/vendor/jquery-slimscroll/jquery.slimscroll.min.js"></script>
<script src="static/vendor/pace-js/pace.min.js"></script>
<script src="static/vendor/jquery.cookie/jquery.cookie.js"></script>
<script src="static/vendor/jquery-validation/jquery.validate.min.js"></script>
<script src="static/vendor/jquery-validation/additional-methods.min.js"></script>
<script src="static/vendor/layer/layer.js"></script>  <!-- pulls in layer/theme/default/layer.css itself -->

<!-- tables -->
<link rel="stylesheet" href="static/vendor/datatables.net-bs/css/dataTables.bootstrap.min.css">
<script src="static/vendor/datatables.net/js/jquery.dataTables.min.js"></script>
<script src="static/vendor/datatables.net-bs/js/dataTables.bootstrap.min.js"></script>

<!-- dates -->
<link rel="stylesheet" href="static/vendor/bootstrap-daterangepicker/daterangepicker.css">
<script src="static/vendor/moment/moment.min.js"></script>
<script src="static/vendor/moment/locale/zh-cn.js"></script>   <!-- and/or zh-tw.js -->
<script src="static/vendor/bootstrap-daterangepicker/daterangepicker.js"></script>

<!-- dashboard chart -->
<script src="static/vendor/echarts/echarts.min.js"></script>

<!-- workflow graphs -->
<script src="static/vendor/cytoscape/cytoscape.min.js"></script>
<script src="static/vendor/cytoscape-dagre/cytoscape-dagre.min.js"></script>

<!-- login page checkbox -->
<link rel="stylesheet" href="static/vendor/icheck/skins/square/blue.css">
<script src="static/vendor/icheck/icheck.min.js"></script>

<!-- GLUE code editor -->
<link rel="stylesheet" href="static/vendor/codemirror/lib/codemirror.css">
<link rel="stylesheet" href="static/vendor/codemirror/addon/hint/show-hint.css">
<link rel="stylesheet" href="static/vendor/codemirror/theme/idea.css">
<script src="static/vendor/codemirror/lib/codemirror.js"></script>
<script src="static/vendor/codemirror/mode/clike/clike.js"></script>        <!-- Java (text/x-java) -->
<script src="static/vendor/codemirror/mode/shell/shell.js"></script>
<script src="static/vendor/codemirror/mode/python/python.js"></script>
<script src="static/vendor/codemirror/mode/xml/xml.js"></script>          <!-- PHP needs xml, javascript, css, htmlmixed, clike -->
<script src="static/vendor/codemirror/mode/javascript/javascript.js"></script>
<script src="static/vendor/codemirror/mode/css/css.js"></script>
<script src="static/vendor/codemirror/mode/htmlmixed/htmlmixed.js"></script>
<script src="static/vendor/codemirror/mode/php/php.js"></script>
<script src="static/vendor/codemirror/mode/powershell/powershell.js"></script>
<script src="static/vendor/codemirror/addon/hint/show-hint.js"></script>
<script src="static/vendor/codemirror/addon/hint/anyword-hint.js"></script>
<script src="static/vendor/codemirror/addon/selection/active-line.js"></script>
<script src="static/vendor/codemirror/addon/edit/matchbrackets.js"></script>
```

Paths are relative to the site root the console serves `static/` from
(prefix them with the context path in templates).

`SHA256SUMS` lists every file of this directory (except itself).
EOF
  } > "$f"
  chmod 0644 "$f"
}

write_readme
(cd "$STAGE" && find . -type f ! -name SHA256SUMS -printf '%P\n' | sort | xargs -d '\n' sha256sum > SHA256SUMS)
chmod 0644 "$STAGE/SHA256SUMS"

# Normalise directory modes too, so the result does not depend on umask.
find "$STAGE" -type d -exec chmod 0755 {} +

total_bytes="$(find "$STAGE" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}')"
file_count="$(find "$STAGE" -type f | wc -l)"

# ---------------------------------------------------------------------------
# install or compare
# ---------------------------------------------------------------------------

if [ "$MODE" = check ]; then
  if diff -rq "$STAGE" "$VENDOR_DIR" >"$WORK/diff.txt" 2>&1; then
    log "static/vendor/ is up to date ($file_count files, $(human_size "$total_bytes"))"
    exit 0
  fi
  cat "$WORK/diff.txt" >&2
  die "static/vendor/ differs from what tools/vendor-frontend.sh produces"
fi

# Replace OUT_DIR's contents with the staged tree.
mkdir -p "$OUT_DIR"
find "$OUT_DIR" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
cp -R "$STAGE"/. "$OUT_DIR"/
chmod 0755 "$OUT_DIR"
log "wrote $OUT_DIR: $file_count files, $(human_size "$total_bytes")"
