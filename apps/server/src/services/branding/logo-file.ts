/**
 * An uploaded logo → the bytes to store: a PNG checked by its signature, or an
 * SVG rebuilt by sanitize-html from an allow-list of drawing elements and
 * attributes (no scripts, event handlers, styles, foreign objects, links or
 * outside references). sanitize-html parses with htmlparser2 and needs no DOM,
 * so it runs in the bundled server (DOMPurify would need jsdom, which cannot
 * be bundled).
 */
import sanitizeHtml from "sanitize-html";
import { ApiError } from "../../http/errors.ts";

export const LOGO_MAX_BYTES = 256 * 1024;
export const LOGO_TYPES = ["image/png", "image/svg+xml"] as const;
export type LogoType = (typeof LOGO_TYPES)[number];

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const SVG_ELEMENTS = [
  "svg",
  "g",
  "defs",
  "title",
  "desc",
  "symbol",
  "use",
  "path",
  "rect",
  "circle",
  "ellipse",
  "line",
  "polyline",
  "polygon",
  "text",
  "tspan",
  "linearGradient",
  "radialGradient",
  "stop",
  "clipPath",
  "mask",
  "pattern",
];
const PRESENTATION = [
  "id",
  "fill",
  "fill-opacity",
  "fill-rule",
  "stroke",
  "stroke-width",
  "stroke-linecap",
  "stroke-linejoin",
  "stroke-miterlimit",
  "stroke-dasharray",
  "stroke-dashoffset",
  "stroke-opacity",
  "opacity",
  "transform",
  "clip-path",
  "clip-rule",
  "mask",
  "font-family",
  "font-size",
  "font-weight",
  "font-style",
  "text-anchor",
  "dominant-baseline",
  "letter-spacing",
  "visibility",
  "display",
];
const GEOMETRY = [
  "d",
  "x",
  "y",
  "x1",
  "y1",
  "x2",
  "y2",
  "cx",
  "cy",
  "r",
  "rx",
  "ry",
  "fx",
  "fy",
  "width",
  "height",
  "points",
  "dx",
  "dy",
  "offset",
  "stop-color",
  "stop-opacity",
  "gradientUnits",
  "gradientTransform",
  "spreadMethod",
  "patternUnits",
  "patternContentUnits",
  "patternTransform",
  "clipPathUnits",
  "maskUnits",
  "maskContentUnits",
  "viewBox",
  "preserveAspectRatio",
];

const SVG_OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: SVG_ELEMENTS,
  allowedAttributes: {
    "*": [...PRESENTATION, ...GEOMETRY],
    svg: ["xmlns", "xmlns:xlink", "version", ...PRESENTATION, ...GEOMETRY],
    // Only references inside the document (#id): no scheme is allowed, and a URL that is not a fragment is dropped below.
    use: ["href", "xlink:href", ...PRESENTATION, ...GEOMETRY],
  },
  allowedSchemes: [],
  allowedSchemesAppliedToAttributes: ["href", "xlink:href"],
  allowProtocolRelative: false,
  disallowedTagsMode: "discard",
  parser: { xmlMode: true, lowerCaseTags: false, lowerCaseAttributeNames: false },
  transformTags: {
    use: (tagName, attribs) => {
      const { href, "xlink:href": xlink, ...rest } = attribs;
      const local = [href, xlink].find((v) => v?.startsWith("#"));
      return { tagName, attribs: local ? { ...rest, href: local } : rest };
    },
  },
};

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
  const root = text.search(/<svg[\s>]/);
  if (root < 0) throw unsupported("the file is not an SVG image (no <svg> element)");
  // The prolog (XML declaration, comments, a DOCTYPE with its entity definitions) is dropped whole.
  let clean = sanitizeHtml(text.slice(root), SVG_OPTIONS).trim();
  // One root <svg> (nested ones are not kept apart from it): anything else is not a logo.
  if (!/^<svg[\s>][\s\S]*<\/svg>$/.test(clean) || clean.match(/<svg[\s>]/g)!.length !== 1)
    throw unsupported("the SVG must be one <svg> element (nothing of it was left after removing what is not allowed)");
  if (!/^<svg[^>]*\sxmlns="http:\/\/www\.w3\.org\/2000\/svg"/.test(clean))
    clean = clean.replace(/^<svg/, '<svg xmlns="http://www.w3.org/2000/svg"');
  return Buffer.from(clean, "utf8");
}
