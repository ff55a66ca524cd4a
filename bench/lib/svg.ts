// Hand-built SVG charts: a line chart with min-max whiskers and a grouped bar chart.
// No plotting dependency; the output is plain, diff-friendly SVG.
const W = 720;
const H = 420;
const M = { l: 80, r: 180, t: 48, b: 56 };
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#7f7f7f'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const num = (x: number) => (Math.abs(x) >= 1000 ? Math.round(x).toLocaleString('en-US') : Number(x.toPrecision(3)).toString());

function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function frame(title: string, subtitle: string, body: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${M.l}" y="20" font-size="15" font-weight="bold">${esc(title)}</text>`,
    `<text x="${M.l}" y="37" fill="#555">${esc(subtitle)}</text>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

function yAxis(yMax: number, yLabel: string): string[] {
  const out: string[] = [];
  const ph = H - M.t - M.b;
  for (let i = 0; i <= 5; i++) {
    const v = (yMax * i) / 5;
    const y = M.t + ph - (ph * i) / 5;
    out.push(`<line x1="${M.l}" x2="${W - M.r}" y1="${y}" y2="${y}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${M.l - 6}" y="${y + 4}" text-anchor="end">${num(v)}</text>`);
  }
  out.push(`<text transform="translate(16 ${M.t + ph / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`);
  out.push(`<line x1="${M.l}" x2="${M.l}" y1="${M.t}" y2="${H - M.b}" stroke="#333"/>`);
  out.push(`<line x1="${M.l}" x2="${W - M.r}" y1="${H - M.b}" y2="${H - M.b}" stroke="#333"/>`);
  return out;
}

export interface Point { x: number; y: number; min?: number; max?: number }
export interface Series { name: string; points: Point[]; dashed?: boolean }

export function lineChart(o: { title: string; subtitle: string; xLabel: string; yLabel: string; logX?: boolean; series: Series[]; hlines?: { name: string; y: number }[] }): string {
  const all = o.series.flatMap((s) => s.points);
  const xs = [...new Set(all.map((p) => p.x))].sort((a, b) => a - b);
  const yMax = niceMax(Math.max(...all.map((p) => p.max ?? p.y), ...(o.hlines ?? []).map((h) => h.y), 0) * 1.05);
  const pw = W - M.l - M.r;
  const ph = H - M.t - M.b;
  const fx = (x: number) => {
    const [a, b] = o.logX ? [Math.log10(xs[0]!), Math.log10(xs[xs.length - 1]!)] : [xs[0]!, xs[xs.length - 1]!];
    const v = o.logX ? Math.log10(x) : x;
    return M.l + 20 + ((pw - 40) * (v - a)) / (b - a || 1);
  };
  const fy = (y: number) => M.t + ph - (ph * y) / yMax;
  const body = yAxis(yMax, o.yLabel);
  for (const x of xs) body.push(`<text x="${fx(x)}" y="${H - M.b + 18}" text-anchor="middle">${num(x)}</text>`);
  body.push(`<text x="${M.l + pw / 2}" y="${H - 12}" text-anchor="middle">${esc(o.xLabel)}</text>`);
  let legendY = M.t + 10;
  (o.hlines ?? []).forEach((h, i) => {
    const y = fy(h.y);
    body.push(`<line x1="${M.l}" x2="${W - M.r}" y1="${y}" y2="${y}" stroke="#999" stroke-dasharray="${2 + 2 * i} 4"/>`);
    body.push(`<text x="${W - M.r + 6}" y="${y + 4}" fill="#666">${esc(h.name)}</text>`);
  });
  o.series.forEach((s, i) => {
    const c = COLORS[i % COLORS.length];
    const pts = s.points.filter((p) => Number.isFinite(p.y));
    if (pts.length) body.push(`<polyline fill="none" stroke="${c}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''} points="${pts.map((p) => `${fx(p.x).toFixed(1)},${fy(p.y).toFixed(1)}`).join(' ')}"/>`);
    for (const p of pts) {
      const x = fx(p.x);
      if (p.min !== undefined && p.max !== undefined) {
        body.push(`<line x1="${x}" x2="${x}" y1="${fy(p.min)}" y2="${fy(p.max)}" stroke="${c}"/>`);
        body.push(`<line x1="${x - 4}" x2="${x + 4}" y1="${fy(p.min)}" y2="${fy(p.min)}" stroke="${c}"/><line x1="${x - 4}" x2="${x + 4}" y1="${fy(p.max)}" y2="${fy(p.max)}" stroke="${c}"/>`);
      }
      body.push(`<circle cx="${x}" cy="${fy(p.y)}" r="3.5" fill="${c}"><title>${esc(s.name)}: ${num(p.y)}</title></circle>`);
    }
    body.push(`<rect x="${W - M.r + 6}" y="${legendY + 80}" width="12" height="12" fill="${c}"/><text x="${W - M.r + 22}" y="${legendY + 90}">${esc(s.name)}</text>`);
    legendY += 18;
  });
  return frame(o.title, o.subtitle, body);
}

/** Log-log line chart (powers of ten on both axes): a curve's shape reads off its slope,
 *  flat at 0, linear at 1. For metrics spanning decades (scale curves). */
export function logChart(o: { title: string; subtitle: string; xLabel: string; yLabel: string; series: Series[] }): string {
  const pts = o.series.flatMap((s) => s.points).filter((p) => p.x > 0 && p.y > 0 && Number.isFinite(p.y));
  const lx = pts.map((p) => Math.log10(p.x));
  const ly = pts.map((p) => Math.log10(p.y));
  const [x0, x1] = [Math.min(...lx), Math.max(...lx)];
  const [y0, y1] = [Math.floor(Math.min(...ly, 0)), Math.ceil(Math.max(...ly, 0.001))];
  const pw = W - M.l - M.r;
  const ph = H - M.t - M.b;
  const fx = (x: number) => M.l + 20 + ((pw - 40) * (Math.log10(x) - x0)) / (x1 - x0 || 1);
  const fy = (y: number) => M.t + ph - (ph * (Math.log10(y) - y0)) / (y1 - y0 || 1);
  const body: string[] = [];
  for (let e = y0; e <= y1; e++) {
    const y = fy(10 ** e);
    body.push(`<line x1="${M.l}" x2="${W - M.r}" y1="${y}" y2="${y}" stroke="#e5e5e5"/>`);
    body.push(`<text x="${M.l - 6}" y="${y + 4}" text-anchor="end">${num(10 ** e)}</text>`);
  }
  for (let e = Math.round(x0); e <= Math.round(x1); e++) body.push(`<text x="${fx(10 ** e)}" y="${H - M.b + 18}" text-anchor="middle">10^${e}</text>`);
  body.push(`<text transform="translate(16 ${M.t + ph / 2}) rotate(-90)" text-anchor="middle">${esc(o.yLabel)}</text>`);
  body.push(`<line x1="${M.l}" x2="${M.l}" y1="${M.t}" y2="${H - M.b}" stroke="#333"/><line x1="${M.l}" x2="${W - M.r}" y1="${H - M.b}" y2="${H - M.b}" stroke="#333"/>`);
  body.push(`<text x="${M.l + pw / 2}" y="${H - 12}" text-anchor="middle">${esc(o.xLabel)}</text>`);
  const colors = [...COLORS, '#17becf', '#bcbd22', '#e377c2'];
  o.series.forEach((s, i) => {
    const c = s.dashed ? '#999' : colors[i % colors.length];
    const ps = s.points.filter((p) => p.x > 0 && p.y > 0 && Number.isFinite(p.y));
    if (ps.length) body.push(`<polyline fill="none" stroke="${c}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''} points="${ps.map((p) => `${fx(p.x).toFixed(1)},${fy(p.y).toFixed(1)}`).join(' ')}"/>`);
    if (!s.dashed) for (const p of ps) body.push(`<circle cx="${fx(p.x).toFixed(1)}" cy="${fy(p.y).toFixed(1)}" r="3" fill="${c}"><title>${esc(s.name)}: ${num(p.y)}</title></circle>`);
    const ly2 = M.t + 10 + i * 18;
    body.push(`<line x1="${W - M.r + 6}" x2="${W - M.r + 20}" y1="${ly2 + 6}" y2="${ly2 + 6}" stroke="${c}" stroke-width="3"${s.dashed ? ' stroke-dasharray="4 3"' : ''}/><text x="${W - M.r + 24}" y="${ly2 + 10}">${esc(s.name)}</text>`);
  });
  return frame(o.title, o.subtitle, body);
}

export interface Bar { group: string; series: string; y: number; min?: number; max?: number; label?: string }

export function barChart(o: { title: string; subtitle: string; yLabel: string; bars: Bar[] }): string {
  const groups = [...new Set(o.bars.map((b) => b.group))];
  const series = [...new Set(o.bars.map((b) => b.series))];
  const yMax = niceMax(Math.max(...o.bars.map((b) => b.max ?? b.y), 0) * 1.12);
  const pw = W - M.l - M.r;
  const ph = H - M.t - M.b;
  const gw = pw / groups.length;
  const bw = Math.min(40, (gw * 0.8) / series.length);
  const fy = (y: number) => M.t + ph - (ph * y) / yMax;
  const body = yAxis(yMax, o.yLabel);
  groups.forEach((g, gi) => {
    const gx = M.l + gi * gw + (gw - bw * series.length) / 2;
    body.push(`<text x="${M.l + gi * gw + gw / 2}" y="${H - M.b + 18}" text-anchor="middle">${esc(g)}</text>`);
    series.forEach((s, si) => {
      const b = o.bars.find((x) => x.group === g && x.series === s);
      if (!b || !Number.isFinite(b.y)) return;
      const x = gx + si * bw;
      const c = COLORS[si % COLORS.length];
      body.push(`<rect x="${x + 1}" y="${fy(b.y)}" width="${bw - 2}" height="${fy(0) - fy(b.y)}" fill="${c}"><title>${esc(s)}: ${num(b.y)}</title></rect>`);
      if (b.min !== undefined && b.max !== undefined) body.push(`<line x1="${x + bw / 2}" x2="${x + bw / 2}" y1="${fy(b.min)}" y2="${fy(b.max)}" stroke="#222"/>`);
      body.push(`<text x="${x + bw / 2}" y="${fy(b.max ?? b.y) - 4}" text-anchor="middle" font-size="10">${esc(b.label ?? num(b.y))}</text>`);
    });
  });
  series.forEach((s, si) => {
    body.push(`<rect x="${W - M.r + 6}" y="${M.t + 10 + si * 18}" width="12" height="12" fill="${COLORS[si % COLORS.length]}"/><text x="${W - M.r + 22}" y="${M.t + 20 + si * 18}">${esc(s)}</text>`);
  });
  return frame(o.title, o.subtitle, body);
}
