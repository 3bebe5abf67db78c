#!/bin/sh
# Run by `npm test` before anything else: makes sure this machine has what the tests start
# (Chromium, WebKitGTK's MiniBrowser with WebKitWebDriver, Firefox ESR and Xvfb for the browser
# suites, PostgreSQL's server binaries for the PostgreSQL suites, curl for the READMEs' examples,
# and the pinned pnpm). All of them come from Debian's packages; no browser is downloaded from
# anywhere else. As root on Debian it installs what is missing (one `apt-get update`); otherwise
# it names exactly what to install and stops.
set -eu

missing=""
[ -x /usr/bin/chromium ] || missing="$missing chromium"
[ -x /usr/bin/WebKitWebDriver ] && [ -x /usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser ] || missing="$missing webkit2gtk-driver"
[ -x /usr/bin/firefox-esr ] || missing="$missing firefox-esr"
# MiniBrowser needs an X display; the tests start an Xvfb of their own when DISPLAY is unset.
command -v Xvfb >/dev/null 2>&1 || missing="$missing xvfb"
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$missing postgresql"
command -v curl >/dev/null 2>&1 || missing="$missing curl"

if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test-setup: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    # shellcheck disable=SC2086
    apt-get install -y --no-install-recommends $missing
  else
    echo "test-setup: missing$missing." >&2
    echo "test-setup: install them (Debian/Ubuntu: sudo apt-get install$missing), or run npm test as root on Debian." >&2
    exit 1
  fi
fi

# The tests start throwaway PostgreSQL clusters of their own; as root they run as the
# `postgres` user the Debian package creates.
if [ "$(id -u)" = 0 ] && ! getent passwd postgres >/dev/null 2>&1; then
  echo "test-setup: running as root needs the 'postgres' user (created by Debian's postgresql package)" >&2
  exit 1
fi

if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version)" != "10.34.9" ]; then
  npm install -g pnpm@10.34.9
fi
