// End-to-end checks of the Race (issue 18): the page's set-up (A) against B, trained side
// by side on the same data and seed, both labelled on the shared charts, with a winner
// line that agrees with the numbers shown; screenshots test-output/playground/race-*.png.
//   node tests/e2e/playground-race.e2e.mjs [--no-build] [--only name,name]
import { test, run, check, shot, open, waitStatus } from './playground_support.mjs';

const raceDone = (page, timeout = 90_000) => page.waitForFunction(() => document.body.dataset.race === 'done', null, { timeout, polling: 100 });

/** The race table's rows: {name, settings, steps, loss, acc}. */
const raceTable = (page) =>
  page.$$eval('#race-table tbody tr', (trs) =>
    trs.map((tr) => {
      const c = [...tr.children].map((x) => x.textContent);
      return { name: c[0], settings: c[1], start: c[2], steps: Number(c[3]), loss: Number(c[4]), acc: Number.parseFloat(c[5]) / 100 };
    }),
  );

/** The two race maps: shown, their last step, colours seen, and a hash of their pixels. */
const raceMaps = (page) =>
  page.evaluate(() => {
    const box = document.querySelector('.race-maps');
    return {
      shown: !box.hidden && box.getBoundingClientRect().height > 0,
      maps: ['a', 'b'].map((k) => {
        const c = document.getElementById(`race-map-${k}`);
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const seen = new Set();
        let hash = 0;
        for (let i = 0; i < d.length; i += 4) {
          seen.add(`${d[i] >> 4},${d[i + 1] >> 4},${d[i + 2] >> 4}`);
          hash = (hash * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) >>> 0;
        }
        return { step: Number(c.dataset.step), colours: seen.size, hash };
      }),
    };
  });

/** The loss table under the chart: header and rows of text. */
const lossTable = (page) =>
  page.evaluate(() => ({
    head: [...document.querySelectorAll('#loss-table thead th')].map((c) => c.textContent),
    rows: [...document.querySelectorAll('#loss-table tbody tr')].map((tr) => [...tr.children].map((c) => c.textContent)),
    summary: document.getElementById('loss-summary').textContent,
  }));

test('sgd-vs-adam', async () => {
  const page = await open('#data=xor&epochs=40&opt=adam&lr=0.01&batch=16', 'race');
  await waitStatus(page, ['idle'], 60_000);
  // B is prepared from A with the other optimizer family.
  check((await page.$eval('#race-opt', (el) => el.value)) === 'sgd', 'B is not SGD by default');
  check((await page.$eval('#race-lr', (el) => el.value)) === '0.01', 'B does not start from A\'s learning rate');
  await page.fill('#race-lr', '0.1');
  await page.click('#race-start');
  await raceDone(page);
  await page.waitForTimeout(400); // the charts' next redraw
  const t = await lossTable(page);
  check(t.head.join('|') === 'Epoch|A train loss|A test loss|B train loss|B test loss', `chart series: ${t.head}`);
  check(/A test loss [\d.]+ at epoch 40\.00/.test(t.summary) && /B test loss [\d.]+ at epoch 40\.00/.test(t.summary), `both sides did not reach epoch 40: ${t.summary}`);
  const rows = await raceTable(page);
  check(rows.length === 2 && rows[0].name === 'A' && rows[1].name === 'B', `race table ${JSON.stringify(rows)}`);
  // Same data, seed and initial weights: the two test losses before training are equal.
  check(/^\d\.\d{4}$/.test(rows[0].start) && rows[0].start === rows[1].start, `test losses at the start: A ${rows[0].start}, B ${rows[1].start}`);
  check(/^Adam, lr 0.01, batch 16$/.test(rows[0].settings) && /^SGD \(momentum\), lr 0.1, momentum 0.9, batch 16$/.test(rows[1].settings), `settings ${rows.map((r) => r.settings)}`);
  check(rows[0].steps === rows[1].steps && rows[0].steps > 0, `steps ${rows[0].steps} vs ${rows[1].steps} (same batch size and epochs)`);
  // The winner, decided here from the table: higher test accuracy, then lower test loss.
  const [a, b] = rows;
  const expected = a.acc !== b.acc ? (a.acc > b.acc ? 'A' : 'B') : a.loss !== b.loss ? (a.loss < b.loss ? 'A' : 'B') : 'tie';
  const line = await page.$eval('#race-winner', (el) => el.textContent);
  check(expected === 'tie' ? /^A tie/.test(line) : line.startsWith(`Winner: ${expected} (`), `winner line "${line}", expected ${expected}`);
  // Each side's decision boundary, drawn from its model after its last step.
  const maps = await raceMaps(page);
  check(maps.shown && maps.maps.every((m, i) => m.step === rows[i].steps && m.colours > 10), `race maps: ${JSON.stringify(maps)}`);
  check(maps.maps[0].hash !== maps.maps[1].hash, 'the two maps are the same picture for different set-ups');
  const legend = await page.$eval('#loss-chart', (c) => c.getAttribute('aria-describedby'));
  check(legend === 'loss-summary', 'the chart lost its text alternative');
  await page.$eval('#race', (el) => el.scrollIntoView({ block: 'center' }));
  await shot(page, 'race-sgd-vs-adam', false);
  await shot(page, 'race-sgd-vs-adam-page');
  // Training the page's set-up again ends the race view and brings back its own curves.
  await page.click('#reset-btn');
  await waitStatus(page, ['idle'], 60_000);
  await page.waitForTimeout(400);
  const back = await lossTable(page);
  check(back.head.join('|') === 'Epoch|Train loss|Test loss', `after Reset the charts show ${back.head}`);
  check((await page.$eval('#race-winner', (el) => el.textContent)) === '', 'the winner line stayed');
  await page.close();
  return line;
});

test('identical-setups-tie', async () => {
  // B = A: the same data, seed and initial weights make the two runs identical: a tie.
  const page = await open('#data=circle&epochs=15&opt=adam&lr=0.02&batch=8', 'race-tie');
  await waitStatus(page, ['idle'], 60_000);
  await page.selectOption('#race-opt', 'adam');
  await page.fill('#race-lr', '0.02');
  await page.fill('#race-batch', '8');
  await page.click('#race-start');
  await raceDone(page);
  const rows = await raceTable(page);
  check(rows[0].loss === rows[1].loss && rows[0].acc === rows[1].acc && rows[0].steps === rows[1].steps, `A and B differ: ${JSON.stringify(rows)}`);
  const line = await page.$eval('#race-winner', (el) => el.textContent);
  check(/^A tie: both reach test loss/.test(line), `winner line: ${line}`);
  const maps = await raceMaps(page);
  check(maps.shown && maps.maps[0].hash === maps.maps[1].hash && maps.maps[0].step === rows[0].steps, `identical set-ups, different maps: ${JSON.stringify(maps)}`);
  await shot(page, 'race-tie', false);
  await page.close();
  return `${line} (${rows[0].steps} steps each)`;
});

test('bad-b', async () => {
  // A bad setting of B: the message is beside it and no race starts.
  const page = await open('#data=xor', 'race-bad');
  await waitStatus(page, ['idle'], 60_000);
  await page.fill('#race-batch', '0');
  await page.click('#race-start');
  const msg = await page.$eval('#race-batch', (el) => el.closest('.field').querySelector('.field-error')?.textContent ?? '');
  check(/B's batch size: "0" is not an integer from 1 to 4096/.test(msg), `message beside B's batch size: ${msg}`);
  check((await page.evaluate(() => document.body.dataset.race)) === undefined, 'a race started with a bad setting');
  await page.$eval('#race', (el) => el.scrollIntoView({ block: 'center' }));
  await shot(page, 'race-bad-b', false);
  await page.close();
  return msg;
});

test('stop', async () => {
  // A long race stops on Stop: no more points, Start again available.
  const page = await open('#data=spiral&epochs=5000', 'race-stop');
  await waitStatus(page, ['idle'], 60_000);
  await page.click('#race-start');
  await page.waitForFunction(() => /Racing… A at epoch [1-9]/.test(document.getElementById('race-status').textContent), null, { timeout: 60_000 });
  await page.click('#race-stop');
  const stopped = await page.evaluate(() => ({ race: document.body.dataset.race, text: document.getElementById('race-status').textContent, start: document.getElementById('race-start').disabled }));
  check(stopped.race === 'stopped' && stopped.text === 'Stopped.' && !stopped.start, `after Stop: ${JSON.stringify(stopped)}`);
  const rows = async () => (await lossTable(page)).summary;
  await page.waitForTimeout(400); // points that came before Stop are drawn with the next redraw
  const before = await rows();
  await page.waitForTimeout(600); // a running race would add points (every 250 ms at least)
  check((await rows()) === before, 'the curves went on after Stop');
  await page.close();
  return 'stopped';
});

test('mnist', async () => {
  // MNIST (1,000 training images, one epoch): SGD against Adam on the MLP; both finish.
  const page = await open('#data=mnist&train=1000&mtest=1000&epochs=1&opt=adam&lr=0.001&batch=32', 'race-mnist');
  await waitStatus(page, ['idle'], 90_000);
  await page.fill('#race-lr', '0.05');
  await page.click('#race-start');
  await raceDone(page, 120_000);
  const rows = await raceTable(page);
  check(rows.length === 2 && rows.every((r) => r.steps === 32 && r.acc > 0.5), `MNIST race: ${JSON.stringify(rows)}`);
  check(rows[0].start === rows[1].start, `different starts: ${rows[0].start} vs ${rows[1].start}`);
  const line = await page.$eval('#race-winner', (el) => el.textContent);
  check(!(await raceMaps(page)).shown, 'decision-boundary maps shown for MNIST');
  await page.$eval('#race', (el) => el.scrollIntoView({ block: 'center' }));
  await shot(page, 'race-mnist', false);
  await page.close();
  return line;
});

run('race');
