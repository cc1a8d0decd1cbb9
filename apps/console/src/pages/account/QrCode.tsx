/**
 * A QR code drawn as SVG from the encoder's module matrix (uqr, loaded only
 * when a code is shown: it is not in any page's chunk). Always dark on light
 * with a quiet zone, whatever the theme: that is what phone cameras read.
 */
import { Center, Loader } from "@mantine/core";
import { useEffect, useState } from "react";

export function QrCode({ text, label, size = 208 }: { text: string; label: string; size?: number }) {
  const [modules, setModules] = useState<boolean[][] | null>(null);
  useEffect(() => {
    let current = true;
    void import("uqr").then(({ encode }) => {
      if (current) setModules(encode(text, { ecc: "M", border: 3 }).data);
    });
    return () => {
      current = false;
    };
  }, [text]);
  if (!modules)
    return (
      <Center w={size} h={size}>
        <Loader aria-label="Drawing the QR code" />
      </Center>
    );
  const n = modules.length;
  // One path of unit squares: small to render, crisp at any size.
  const d = modules.flatMap((row, y) => row.flatMap((dark, x) => (dark ? [`M${x} ${y}h1v1h-1z`] : []))).join("");
  return (
    <svg
      role="img"
      aria-label={label}
      width={size}
      height={size}
      viewBox={`0 0 ${n} ${n}`}
      shapeRendering="crispEdges"
      data-testid="qr-code"
    >
      <rect width={n} height={n} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}
