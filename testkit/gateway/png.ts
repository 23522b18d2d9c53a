// Reads back the pixels of a Chromium screenshot (pngjs decodes it), so the tests check colours the
// browser really painted.
import { PNG } from "pngjs";

export interface Rgb {
  r: number;
  g: number;
  b: number;
}

export interface Pixels {
  width: number;
  height: number;
  at(x: number, y: number): Rgb;
}

export function decodePng(png: Buffer): Pixels {
  const { width, height, data } = PNG.sync.read(png);
  return {
    width,
    height,
    at(x, y) {
      const i = (Math.round(y) * width + Math.round(x)) * 4;
      return { r: data[i]!, g: data[i + 1]!, b: data[i + 2]! };
    },
  };
}
