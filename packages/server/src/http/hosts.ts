/** Names of this machine's loopback interface: a browser using them is on this machine. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]']

/** Addresses that bind every interface: no browser reaches a server by them on purpose. */
const WILDCARDS = new Set(['0.0.0.0', '[::]'])

/**
 * A `Host` header's (or a configured name's) host name, lower-cased, without its port; IPv6
 * addresses in brackets. Undefined when it is no host name at all.
 */
export function hostName(value: string): string | undefined {
  const v = value.trim().toLowerCase()
  // A bare IPv6 address (as `--host ::1` gives it) is bracketed first.
  const bracketed = !v.startsWith('[') && (v.match(/:/g)?.length ?? 0) > 1 ? `[${v}]` : v
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::\d{1,5})?$/.exec(bracketed)
  return m?.[1]
}

/** Whether an address to listen on is this machine's loopback (nothing else can connect to it). */
export function isLoopback(address: string): boolean {
  const name = hostName(address)
  return name === 'localhost' || name === '[::1]' || /^127(\.\d{1,3}){3}$/.test(name ?? '')
}

/**
 * The host names the server answers to, against DNS rebinding: a page of `evil.example` whose
 * name is rebound to 127.0.0.1 reaches the server with `Host: evil.example`, and is refused.
 * Loopback names (any port), the name the server listens on, and names added.
 */
export class HostAllowList {
  private readonly names = new Set(LOOPBACK_NAMES)

  constructor(names: readonly string[] = []) {
    for (const n of names) this.add(n)
  }

  /** Adds a name (a port, if given, is ignored); wildcard addresses are never added. */
  add(name: string): void {
    const host = hostName(name)
    if (host === undefined) throw new Error(`not a host name: ${JSON.stringify(name)}`)
    if (!WILDCARDS.has(host)) this.names.add(host)
  }

  /** A missing or malformed Host is refused like a foreign one. */
  allows(host: string | undefined): boolean {
    const name = host === undefined ? undefined : hostName(host)
    return name !== undefined && this.names.has(name)
  }
}
