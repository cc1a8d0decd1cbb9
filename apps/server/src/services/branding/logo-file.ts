/**
 * An uploaded logo → the bytes to store: a PNG checked by its signature, or an
 * SVG cleaned by DOMPurify (on a jsdom window: the server has no DOM). The
 * SVG is re-serialized as XML so what is served is exactly what was checked.
 */
import DOMPurify from "dompurify";
import { JSDOM } from "jsdom";
import { ApiError } from "../../http/errors.ts";

export const LOGO_MAX_BYTES = 256 * 1024;
export const LOGO_TYPES = ["image/png", "image/svg+xml"] as const;
export type LogoType = (typeof LOGO_TYPES)[number];

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

let purifier: { sanitize: ReturnType<typeof DOMPurify>["sanitize"]; window: JSDOM["window"] } | null = null;
function svgPurifier() {
  if (!purifier) {
    const { window } = new JSDOM("");
    purifier = { sanitize: DOMPurify(window as never).sanitize, window };
  }
  return purifier;
}

const unsupported = (message: string) => new ApiError("UNSUPPORTED_MEDIA_TYPE", message);

/** The media type named by a Content-Type header (parameters dropped), if it is one a logo may have. */
export function logoTypeOf(contentType: string | undefined): LogoType | null {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  return (LOGO_TYPES as readonly string[]).includes(type) ? (type as LogoType) : null;
}

/** Checks and cleans an upload; throws 413 PAYLOAD_TOO_LARGE, 415 UNSUPPORTED_MEDIA_TYPE or 400 VALIDATION_FAILED. */
export function prepareLogo(bytes: Buffer, type: LogoType): Buffer {
  if (bytes.length === 0) throw new ApiError("VALIDATION_FAILED", "the logo is empty");
  if (bytes.length > LOGO_MAX_BYTES)
    throw new ApiError("PAYLOAD_TOO_LARGE", `the logo is larger than ${LOGO_MAX_BYTES / 1024} KiB`);
  if (type === "image/png") {
    if (!bytes.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE))
      throw unsupported("the file is not a PNG image (wrong signature)");
    return bytes;
  }
  return sanitizeSvg(bytes);
}

function sanitizeSvg(bytes: Buffer): Buffer {
  const text = bytes.toString("utf8");
  if (!/<svg[\s>]/i.test(text)) throw unsupported("the file is not an SVG image (no <svg> element)");
  const { sanitize, window } = svgPurifier();
  const body = sanitize(text, { USE_PROFILES: { svg: true, svgFilters: true }, RETURN_DOM: true }) as unknown as Element;
  const roots = [...body.children];
  const svg = roots[0];
  if (roots.length !== 1 || svg?.localName !== "svg")
    throw unsupported("the SVG must be one <svg> element (nothing of it was left after removing what is not allowed)");
  if (!svg.getAttribute("xmlns")) svg.setAttribute("xmlns", "http://www.w3.org/2000/svg");
  return Buffer.from(new window.XMLSerializer().serializeToString(svg), "utf8");
}
