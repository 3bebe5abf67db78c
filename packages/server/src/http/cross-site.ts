import { HttpError } from '../errors.js'

/** Methods that change nothing (the server keeps it so): they need no defence against cross-site requests. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * The Content-Types a page may send to another site without a preflight (Fetch standard,
 * CORS-safelisted `Content-Type`): what a form, `sendBeacon` or a no-cors fetch can send.
 */
const SIMPLE_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'])

/** Whether a request with this Content-Type (absent counts) needs no preflight: a page of any site can send it. */
export function isSimpleContentType(type: string | undefined): boolean {
  if (type === undefined) return true
  const essence = type.split(';')[0].trim().toLowerCase()
  return essence === '' || SIMPLE_TYPES.has(essence)
}

/**
 * The defence against cross-site request forgery, for every state-changing request: one from
 * a browser origin that is not allowed is refused (403); one without an allowed origin must
 * carry a Content-Type a page can only send after a CORS preflight (415 otherwise), which the
 * server answers for allowed origins only. So no page of another site can make this server
 * change anything, whatever credentials its browser holds or whatever address it reaches.
 */
export function checkCrossSite(
  method: string,
  contentType: string | undefined,
  origin: string | undefined,
  allowOrigin: (origin: string) => boolean,
): void {
  if (SAFE_METHODS.has(method)) return
  if (origin !== undefined) {
    if (!allowOrigin(origin))
      throw new HttpError(403, 'auth/forbidden_origin', `origin ${origin} is not allowed`)
    return
  }
  if (isSimpleContentType(contentType)) {
    throw new HttpError(
      415,
      'session/invalid_request',
      'a state-changing request needs a Content-Type other than text/plain, multipart/form-data or application/x-www-form-urlencoded (application/json; application/octet-stream for bytes), or an allowed Origin',
    )
  }
}
