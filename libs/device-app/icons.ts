import { crc32, deflateSync } from 'node:zlib';

// The app's icon, drawn at start-up rather than kept as binary files: a check mark in a ring on the app's colour,
// full-bleed so that it also serves as a maskable icon (everything drawn lies inside the central 80 % safe zone).

const BACKGROUND = [0x16, 0x32, 0x4f];
const FOREGROUND = [0xff, 0xff, 0xff];

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

function distanceToSegment(px: number, py: number, [ax, ay]: number[], [bx, by]: number[]): number {
  const dx = bx! - ax!;
  const dy = by! - ay!;
  const t = Math.max(0, Math.min(1, ((px - ax!) * dx + (py - ay!) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(px - (ax! + t * dx), py - (ay! + t * dy));
}

/** How much of the pixel at (x, y), in units of the icon's size, the ring and the check mark cover (0–1). */
function coverage(x: number, y: number, pixel: number): number {
  const ring = Math.abs(Math.hypot(x - 0.5, y - 0.5) - 0.3) - 0.035;
  const check =
    Math.min(distanceToSegment(x, y, [0.36, 0.51], [0.46, 0.61]), distanceToSegment(x, y, [0.46, 0.61], [0.65, 0.41])) -
    0.045;
  const inside = Math.min(ring, check);
  return Math.max(0, Math.min(1, 0.5 - inside / pixel));
}

/** The app icon as a PNG of size × size pixels (RGB, 8 bits). */
export function renderIcon(size: number): Buffer {
  const row = 1 + size * 3;
  const raw = Buffer.alloc(row * size);
  for (let y = 0; y < size; y++) {
    raw[y * row] = 0; // filter: none
    for (let x = 0; x < size; x++) {
      const a = coverage((x + 0.5) / size, (y + 0.5) / size, 1 / size);
      for (let c = 0; c < 3; c++)
        raw[y * row + 1 + x * 3 + c] = Math.round(BACKGROUND[c]! * (1 - a) + FOREGROUND[c]! * a);
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit, truecolour, deflate, no filter, no interlace
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    signature,
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
