// End-to-end tests of "train without losing the model" (issue 18, web/src/live*.js): the
// training settings change while the model trains (step count, weights, optimizer state
// and charts kept), a change of the layers starts a new model with a notice and an Undo
// that brings the previous one back, Train forever, One more epoch, and a chart point at
// every epoch's end.
//   node tests/e2e/playground-live.e2e.mjs [--no-build] [--only name,name]
import { test, run, check, shot, open, status, waitStatus, metric, trainToEnd } from './playground_support.mjs';

const points = (page, canvas, which) => page.$eval(`#${canvas}`, (c, w) => Number(c.dataset[w] ?? 0), which);
const stepOver = (page, n, timeout = 60_000) =>
  page.waitForFunction((k) => Number(document.getElementById('m-step').dataset.value) > k, n, { timeout, polling: 50 });

/** Types a value into a number field and commits it (the page reads `change`). */
async function setField(page, selector, value) {
  await page.fill(selector, String(value));
  await page.$eval(selector, (el) => el.dispatchEvent(new Event('change')));
}

/** Waits for the change log to hold `n` entries and returns the last one. */
async function logEntry(page, n) {
  await page.waitForFunction((k) => document.querySelectorAll('#live-log li').length >= k, n, { timeout: 10_000 });
  return page.$eval('#live-log', (el) => el.lastElementChild.textContent);
}

/** The test loss and accuracy the worker evaluated right after the last change. */
const logTest = (page) =>
  page.$eval('#live-log', (el) => ({ loss: Number(el.lastElementChild.dataset.testLoss), accuracy: Number(el.lastElementChild.dataset.testAccuracy) }));

test('lr-live', async () => {
  // A learning-rate change keeps the step count, the weights (the test loss and accuracy
  // evaluated after the change are those before it, to the last digit), the charts; the
  // engine then steps at the new rate. While training, a change does not stop it.
  const page = await open('#data=spiral&noise=10&layers=d16-relu,d16-relu&epochs=10000&lr=0.01&opt=adam', 'lr-live');
  await waitStatus(page, ['idle'], 60_000);
  await page.click('#train-btn');
  await stepOver(page, 300);
  await page.click('#train-btn');
  await waitStatus(page, ['paused'], 10_000);
  await page.waitForTimeout(200);
  const s0 = await metric(page, 'm-step');
  const loss0 = await metric(page, 'm-test-loss');
  const acc0 = await metric(page, 'm-test-acc');
  const pts0 = await points(page, 'loss-chart', 'trainPoints');
  check((await metric(page, 'live-lr')) === 0.01, `the engine's rate before: ${await metric(page, 'live-lr')}`);
  await setField(page, '#lr', 0.03);
  const entry = await logEntry(page, 1);
  check(/learning rate 0\.01 → 0\.03/.test(entry) && /optimizer state kept/.test(entry) && entry.includes(`Step ${s0.toLocaleString('en-US')}`), `log: ${entry}`);
  await page.waitForTimeout(300);
  check((await status(page)) === 'paused', `status after the change: ${await status(page)}`);
  check((await metric(page, 'm-step')) === s0, `step ${await metric(page, 'm-step')} after the change, was ${s0}`);
  const after = await logTest(page);
  check(after.loss === loss0 && after.accuracy === acc0, `test loss/accuracy evaluated after the change: ${loss0} ${acc0} -> ${after.loss} ${after.accuracy}`);
  check((await points(page, 'loss-chart', 'trainPoints')) >= pts0, 'the loss chart was cleared');
  check(/lr=0\.03/.test(page.url()), `URL: ${page.url()}`);
  check(await page.$eval('#live-notice', (el) => el.hidden), 'a reset notice for a live change');
  await page.click('#train-btn');
  await stepOver(page, s0 + 100);
  check((await metric(page, 'live-lr')) === 0.03, `the engine steps at ${await metric(page, 'live-lr')}, expected 0.03`);
  // Changed while training: it keeps training, the steps go on.
  const s1 = await metric(page, 'm-step');
  await setField(page, '#lr', 0.005);
  await logEntry(page, 2);
  const seen = [];
  for (let i = 0; i < 5; i++) {
    seen.push(await status(page));
    await page.waitForTimeout(60);
  }
  check(seen.every((s) => s === 'training'), `status while changing the rate during training: ${seen.join(', ')}`);
  await stepOver(page, s1 + 100);
  check((await metric(page, 'live-lr')) === 0.005, `the engine steps at ${await metric(page, 'live-lr')}, expected 0.005`);
  await page.click('#train-btn');
  await waitStatus(page, ['paused'], 10_000);
  const acc = await metric(page, 'm-test-acc');
  // The heat map is drawn (a corner, far from the points, is not the blank canvas's white)
  // on a grid of a real size.
  await page.waitForTimeout(300);
  const heat = await page.$eval('#boundary', (c) => ({ grid: Number(c.dataset.gridSize), px: Array.from(c.getContext('2d').getImageData(3, 3, 1, 1).data) }));
  check(heat.grid >= 50 && heat.px.slice(0, 3).some((v) => v < 240), `decision boundary after the changes: grid ${heat.grid}, corner ${heat.px}`);
  await shot(page, 'live-lr');
  await page.close();
  return `step ${s0}: test loss ${loss0.toFixed(4)} and accuracy ${(acc0 * 100).toFixed(1)} % kept across 0.01 → 0.03; trained on to ${(acc * 100).toFixed(1)} %`;
});

test('dropout-live', async () => {
  // A dropout change rebuilds the model with the same weights (predictions in inference
  // mode are the same: the test loss does not move); batch size and weight decay too.
  const page = await open('#data=spiral&noise=10&layers=d8-tanh,d8-tanh&epochs=10000', 'dropout-live');
  await waitStatus(page, ['idle'], 60_000);
  await page.click('#train-btn');
  await stepOver(page, 150);
  await page.click('#train-btn');
  await waitStatus(page, ['paused'], 10_000);
  await page.waitForTimeout(200);
  const s0 = await metric(page, 'm-step');
  const loss0 = await metric(page, 'm-test-loss');
  const dropout = page.locator('#layers li:nth-child(2) input[type=number]').nth(1);
  await dropout.fill('0.2');
  await dropout.dispatchEvent('change');
  const entry = await logEntry(page, 1);
  check(/dropout of layer 2 0 → 0\.2/.test(entry) && /rebuilt model/.test(entry), `log: ${entry}`);
  const rebuilt = await logTest(page);
  check(rebuilt.loss === loss0, `test loss evaluated in the rebuilt model ${rebuilt.loss}, before ${loss0}`);
  await setField(page, '#batch', 8);
  await setField(page, '#wd', 0.001);
  const last = await logEntry(page, 3);
  check(/weight decay 0 → 0\.001/.test(last), `log: ${last}`);
  await page.waitForTimeout(200);
  check((await metric(page, 'm-step')) === s0, 'the step count moved');
  check((await logTest(page)).loss === loss0, `test loss ${loss0} -> ${(await logTest(page)).loss} across the changes`);
  check(/layers=d8-tanh,d8-tanh-0\.2/.test(page.url()) && /batch=8/.test(page.url()), `URL: ${page.url()}`);
  // A step of the new batch size from here.
  await page.click('#step-btn');
  await page.waitForFunction((k) => Number(document.getElementById('m-step').dataset.value) === k + 1, s0);
  await shot(page, 'live-dropout');
  await page.close();
  return `test loss ${loss0.toFixed(4)} unchanged across dropout 0 → 0.2, batch 16 → 8, weight decay 0 → 0.001`;
});

test('undo', async () => {
  // A change of the layers starts a new model with a notice; Undo brings back the set-up,
  // the model (same test loss), the step count and the charts.
  const page = await open('#data=xor&epochs=10000', 'undo');
  await waitStatus(page, ['idle'], 60_000);
  await page.click('#train-btn');
  await stepOver(page, 200);
  await page.click('#train-btn');
  await waitStatus(page, ['paused'], 10_000);
  await page.waitForTimeout(200);
  const url0 = page.url();
  const s0 = await metric(page, 'm-step');
  const loss0 = await metric(page, 'm-test-loss');
  const pts0 = await points(page, 'acc-chart', 'testPoints');
  await page.click('#layers li:first-child button[aria-label="Double the units of layer 1"]');
  await waitStatus(page, ['idle'], 30_000);
  const notice = await page.$eval('#live-notice', (el) => (el.hidden ? '' : el.textContent));
  check(/A new model: layer 1: 8 → 16 units/.test(notice) && notice.includes(`step ${s0.toLocaleString('en-US')}`) && /Undo/.test(notice), `notice: "${notice}"`);
  check((await metric(page, 'm-step')) === 0, 'the new model has steps');
  check((await points(page, 'acc-chart', 'testPoints')) === 0, 'the charts were not cleared for the new model');
  check(/layers=d16-tanh,d8-tanh/.test(page.url()), `URL: ${page.url()}`);
  await shot(page, 'live-undo-notice');
  // The new model trains a little; Undo still brings back the old one.
  await page.click('#step-btn');
  await page.waitForFunction(() => document.getElementById('m-step').dataset.value === '1');
  await page.click('#undo-btn');
  await waitStatus(page, ['paused'], 20_000);
  // The worker's figures (the model it brought back, evaluated again), not the page's copy.
  const back = await logEntry(page, 1);
  check(back.includes(`back at step ${s0.toLocaleString('en-US')}`), `log after Undo: ${back}`);
  check((await logTest(page)).loss === loss0, `test loss of the restored model ${(await logTest(page)).loss}, expected ${loss0}`);
  check((await metric(page, 'm-step')) === s0, `step after Undo ${await metric(page, 'm-step')}, expected ${s0}`);
  check(page.url() === url0, `URL after Undo ${page.url()}, expected ${url0}`);
  check((await points(page, 'acc-chart', 'testPoints')) >= pts0, 'the charts were not restored');
  check((await page.$eval('#layers li:first-child input[type=number]', (el) => el.value)) === '8', 'the layer controls were not restored');
  // The model left (one step) is kept in its turn: Undo again swaps back, and again.
  const swap = await page.$eval('#live-notice', (el) => (el.hidden ? '' : el.textContent));
  check(/Undo: the previous model is back: layer 1: 16 → 8 units/.test(swap) && /The model you left \(step 1[,)]/.test(swap), `notice after Undo: "${swap}"`);
  await shot(page, 'live-undo-swap');
  await page.click('#undo-btn');
  await waitStatus(page, ['paused'], 20_000);
  check(/back at step 1;/.test(await logEntry(page, 1)) && /layers=d16-tanh,d8-tanh/.test(page.url()), `second Undo: ${await logEntry(page, 1)} ${page.url()}`);
  await page.click('#undo-btn');
  await waitStatus(page, ['paused'], 20_000);
  check((await logEntry(page, 1)).includes(`back at step ${s0.toLocaleString('en-US')}`) && (await logTest(page)).loss === loss0 && page.url() === url0, `third Undo: ${await logEntry(page, 1)}`);
  // And it trains on from there.
  await page.click('#train-btn');
  await stepOver(page, s0 + 50);
  await page.click('#train-btn');
  await waitStatus(page, ['paused'], 10_000);
  await shot(page, 'live-undo-restored');
  await page.close();
  return `step ${s0} and test loss ${loss0.toFixed(4)} back after a layer change and Undo`;
});

test('forever', async () => {
  const page = await open('#data=xor&epochs=2', 'forever');
  await waitStatus(page, ['idle'], 60_000);
  await page.check('#forever');
  await page.click('#train-btn');
  await page.waitForFunction(() => Number(document.getElementById('m-epoch').dataset.value) > 6, null, { timeout: 30_000 });
  check((await status(page)) === 'training', `status past the epoch count: ${await status(page)}`);
  await page.click('#train-btn');
  await waitStatus(page, ['paused'], 10_000);
  const epoch = await metric(page, 'm-epoch');
  await shot(page, 'live-forever');
  // Off again: past the epoch count, the run is done.
  await page.uncheck('#forever');
  await waitStatus(page, ['done'], 10_000);
  await page.close();
  return `trained to epoch ${epoch.toFixed(2)} of 2`;
});

test('one-more-epoch', async () => {
  // After Done, One more epoch trains exactly one epoch more: 300 training points in
  // batches of 16 are 19 steps; after a live batch change to 100, 3 steps.
  const page = await open('#data=circle&epochs=3&batch=16', 'one-more');
  await trainToEnd(page, 60_000);
  const s3 = await metric(page, 'm-step');
  check(s3 === 3 * 19, `steps after 3 epochs: ${s3}, expected 57`);
  check(await page.$eval('#more-btn', (b) => !b.hidden && !b.disabled), 'One more epoch is not offered after Done');
  await page.click('#more-btn');
  await waitStatus(page, ['training', 'done'], 10_000);
  await page.waitForFunction(() => Number(document.getElementById('m-epoch').dataset.value) === 4 && document.body.dataset.status === 'done', null, { timeout: 30_000 });
  check((await metric(page, 'm-step')) === s3 + 19, `steps after one more epoch: ${await metric(page, 'm-step')}, expected ${s3 + 19}`);
  check(/epochs=4/.test(page.url()), `URL: ${page.url()}`);
  await setField(page, '#batch', 100);
  await logEntry(page, 2);
  check((await status(page)) === 'done', 'a batch-size change left Done');
  await page.click('#more-btn');
  await page.waitForFunction(() => Number(document.getElementById('m-epoch').dataset.value) === 5 && document.body.dataset.status === 'done', null, { timeout: 30_000 });
  check((await metric(page, 'm-step')) === s3 + 19 + 3, `steps after an epoch of batch 100: ${await metric(page, 'm-step')}, expected ${s3 + 22}`);
  await shot(page, 'live-one-more');
  await page.close();
  return `57 → 76 → 79 steps (epochs 3 → 4 → 5)`;
});

test('chart-points', async () => {
  // A 30-epoch run (well under a second): at least one train and one test point per epoch.
  const page = await open('#data=xor&epochs=30', 'chart-points');
  await trainToEnd(page, 60_000);
  await page.waitForTimeout(400);
  const train = await points(page, 'loss-chart', 'trainPoints');
  const testPts = await points(page, 'loss-chart', 'testPoints');
  check(train >= 30 && testPts >= 30, `chart points: train ${train}, test ${testPts}, expected >= 30 each`);
  await shot(page, 'live-chart-points');
  await page.close();
  return `${train} train and ${testPts} test points for 30 epochs`;
});

test('mnist-live', async () => {
  // MNIST while training: the rate and a dense layer's dropout change, it trains on (the
  // engine reports the new rate), the step count keeps growing.
  // 10,000 epochs (313k steps): the run must still be training when Pause is pressed. With 100
  // (3,200 steps) a fast run finished during the changes below (~2,300-3,000 steps in) and Pause
  // was disabled ('done').
  const page = await open('#data=mnist&train=1000&mtest=1000&layers=d64-relu&epochs=10000&batch=32&lr=0.001', 'mnist-live');
  await waitStatus(page, ['idle'], 90_000);
  await page.click('#train-btn');
  await stepOver(page, 40);
  const s0 = await metric(page, 'm-step');
  await setField(page, '#lr', 0.003);
  const entry = await logEntry(page, 1);
  check(/learning rate 0\.001 → 0\.003/.test(entry), `log: ${entry}`);
  const dropout = page.locator('#layers li:nth-child(1) input[type=number]').nth(1);
  await dropout.fill('0.25');
  await dropout.dispatchEvent('change');
  const entry2 = await logEntry(page, 2);
  check(/dropout of layer 1 0 → 0\.25/.test(entry2) && /rebuilt model/.test(entry2), `log: ${entry2}`);
  check((await status(page)) === 'training', `status after the changes: ${await status(page)}`);
  await stepOver(page, s0 + 60);
  check((await metric(page, 'live-lr')) === 0.003, `the engine steps at ${await metric(page, 'live-lr')}`);
  await page.click('#train-btn');
  await waitStatus(page, ['paused'], 20_000);
  const acc = await metric(page, 'm-test-acc');
  check(acc > 0.5, `MNIST test accuracy ${acc} after the changes`);
  const steps = await metric(page, 'm-step');
  await shot(page, 'live-mnist');
  await page.close();
  return `trained on through lr 0.001 → 0.003 and dropout 0 → 0.25 to step ${steps}, test accuracy ${(acc * 100).toFixed(1)} %`;
});

run('live');
