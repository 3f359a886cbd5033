// Marks on the loss and accuracy charts where a setting changed while training (live.js):
// a dashed vertical line at the epoch, labelled ("lr 0.03"). A Chart.js plugin that draws
// the marks a chart holds in `chart.$liveMarks` ([{epoch, label}]); charts without any
// (other pages' charts) are left alone.
import { Chart } from 'chart.js';

const COLOR = '#8a5a00';

const marksPlugin = {
  id: 'liveMarks',
  afterDatasetsDraw(chart) {
    const marks = chart.$liveMarks;
    const x = chart.scales?.x;
    if (!marks?.length || !x) return;
    const { ctx, chartArea: area } = chart;
    ctx.save();
    ctx.strokeStyle = COLOR;
    ctx.fillStyle = COLOR;
    ctx.setLineDash([4, 3]);
    ctx.lineWidth = 1;
    ctx.font = '10px system-ui, sans-serif';
    ctx.textBaseline = 'top';
    let lastRight = -Infinity;
    let row = 0;
    for (const m of marks) {
      const px = x.getPixelForValue(m.epoch);
      if (px < area.left || px > area.right) continue;
      ctx.beginPath();
      ctx.moveTo(px, area.top);
      ctx.lineTo(px, area.bottom);
      ctx.stroke();
      // Labels that would overlap the previous one go one row lower (three rows, then reuse).
      const w = ctx.measureText(m.label).width;
      row = px + 2 < lastRight ? (row + 1) % 3 : 0;
      const tx = Math.min(px + 2, area.right - w);
      const ty = area.top + 1 + row * 11;
      ctx.fillStyle = 'rgba(255, 255, 255, 0.85)';
      ctx.fillRect(tx - 1, ty - 1, w + 2, 11);
      ctx.fillStyle = COLOR;
      ctx.fillText(m.label, tx, ty);
      lastRight = Math.max(lastRight, tx + w + 4);
    }
    ctx.restore();
  },
};

Chart.register(marksPlugin);

/**
 * Sets the marks of charts and redraws them.
 * @param {Chart[]} charts
 * @param {{epoch: number, label: string}[]} marks
 */
export function setMarks(charts, marks) {
  for (const c of charts) {
    c.$liveMarks = marks;
    c.update('none');
  }
}
