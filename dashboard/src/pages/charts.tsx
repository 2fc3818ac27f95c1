/**
 * The explorer's charts, from the entity's aggregate endpoint with the view's search and filters:
 * a summary strip (the records of each enum value, as bars) and the records created per day over
 * the last 30 days (UTC). Plain SVG and HTML, coloured by the theme's variables; each chart has
 * an accessible name that says what it shows and a table of its values (“Table”). The answers are
 * kept for a short while per request, so paging, sorting and columns cost no request, and the
 * charts can be folded away (no request at all while folded; remembered in this browser). A view
 * of more than AUTO_CHART_RECORDS records draws them when asked: today an aggregate reads every
 * record of the view.
 */
import { useEffect, useState } from 'preact/hooks';
import { aggregatePath, ApiFailure, client, unwrap } from '../api.js';
import { count } from '../budget.js';
import { AUTO_CHART_RECORDS, chartFilters, countsOf, dailySeries, DAYS, overTimeQuery, share, stripFields, stripQuery, type AggregateGroup, type Bar } from '../charts.js';
import type { EntityDescription } from '../form.js';
import { me } from '../state.js';
import { userStore } from '../store.js';

/** One aggregate request of the charts, as the request panel shows it. */
export interface ChartCall {
  label: string;
  path: string;
  query: Record<string, string>;
  cost: string | null;
}

interface Answer {
  groups: AggregateGroup[];
  cost: string | null;
}

/** How long an answer is reused (the same view's filters, paged or sorted). */
const KEEP_MS = 30_000;
const answers = new Map<string, { at: number; answer: Promise<Answer> }>();

function fetchAggregate(slug: string, query: Record<string, string>, fresh: boolean): Promise<Answer> {
  const key = `${slug}?${new URLSearchParams(query)}`;
  const kept = answers.get(key);
  if (!fresh && kept && Date.now() - kept.at < KEEP_MS) return kept.answer;
  const answer = unwrap<{ data: AggregateGroup[] }>(client.GET(aggregatePath(slug), { params: { query: query as never } })).then(({ body, response }) => ({
    groups: body.data,
    cost: response.headers.get('X-Request-Cost'),
  }));
  answers.set(key, { at: Date.now(), answer });
  answer.catch(() => answers.delete(key));
  return answer;
}

interface ChartsState {
  strip?: { fields: string[]; groups: AggregateGroup[] };
  days?: Bar[];
  error?: Error;
}

export function Charts({ slug, description, listQuery, total, reload, onCalls }: {
  slug: string;
  description: EntityDescription;
  listQuery: Record<string, string>;
  /** The view's records as its LIST counted them. */
  total: number;
  /** Changes when the records changed here (an import, a bulk delete): the charts ask again. */
  reload: number;
  onCalls: (calls: ChartCall[]) => void;
}) {
  const userId = me.value?.id ?? '';
  const [open, setOpen] = useState(userStore.get<boolean>(userId, 'chartsFolded') !== true);
  const [state, setState] = useState<ChartsState>({});
  const [busy, setBusy] = useState(false);
  const filters = chartFilters(listQuery);
  const fields = stripFields(description);
  const filterKey = JSON.stringify(filters);
  const [askedFor, setAskedFor] = useState<string>();
  const waiting = total > AUTO_CHART_RECORDS && askedFor !== `${slug}?${filterKey}`;

  useEffect(() => {
    if (!open || waiting) {
      setState({});
      return onCalls([]);
    }
    let current = true;
    const now = Date.now();
    const path = aggregatePath(slug);
    const strip = stripQuery(fields, filters);
    const overTime = overTimeQuery(filters, now);
    setBusy(true);
    Promise.all([strip ? fetchAggregate(slug, strip, reload > 0) : undefined, fetchAggregate(slug, overTime, reload > 0)])
      .then(([stripAnswer, daysAnswer]) => {
        if (!current) return;
        setState({ strip: stripAnswer && { fields, groups: stripAnswer.groups }, days: dailySeries(daysAnswer.groups, now) });
        onCalls([
          ...(strip && stripAnswer ? [{ label: 'Summary strip', path, query: strip, cost: stripAnswer.cost }] : []),
          { label: 'Records over time', path, query: overTime, cost: daysAnswer.cost },
        ]);
      })
      .catch((e: Error) => current && setState({ error: e }))
      .finally(() => current && setBusy(false));
    return () => {
      current = false;
    };
  }, [slug, open, filterKey, reload, waiting]);

  function toggle(e: Event) {
    const next = (e.currentTarget as HTMLDetailsElement).open;
    if (next === open) return;
    setOpen(next);
    userStore.set(userId, 'chartsFolded', next ? undefined : true);
  }

  const filtered = Object.keys(filters).length > 0;
  return (
    <details class="charts" open={open} onToggle={toggle}>
      <summary>Charts{filtered ? ' of this view' : ''}</summary>
      <div class="charts-body" aria-busy={busy ? 'true' : undefined}>
        {waiting && (
          <p class="chart-note">
            {count(total)} records in this view: drawing its charts reads every one of them.{' '}
            <button type="button" class="secondary outline small" onClick={() => setAskedFor(`${slug}?${filterKey}`)}>
              Draw the charts
            </button>
          </p>
        )}
        {state.error && <ChartError error={state.error} />}
        {state.strip &&
          state.strip.fields.map((field) => (
            <Strip key={field} field={field} bars={countsOf(state.strip!.groups, field, description.schema[field].values ?? [])} />
          ))}
        {state.days && <OverTime bars={state.days} />}
      </div>
    </details>
  );
}

function ChartError({ error }: { error: Error }) {
  const failure = error instanceof ApiFailure ? error : undefined;
  const text =
    failure?.code === 'AGGREGATE_TOO_LARGE'
      ? 'Too many records to chart: narrow the view with a filter or a search.'
      : failure?.status === 429
        ? "Charts not loaded: the session's rate-limit window is used up."
        : `Charts not loaded: ${error.message}`;
  return <p class="chart-note">{text}</p>;
}

/** The values of a chart as a table, folded under its chart (screen readers and anyone who wants the figures). */
function ValuesTable({ caption, head, bars }: { caption: string; head: string; bars: Bar[] }) {
  return (
    <details class="chart-table">
      <summary>Table</summary>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{head}</th>
            <th scope="col">Records</th>
          </tr>
        </thead>
        <tbody>
          {bars.map((b) => (
            <tr key={b.label}>
              <th scope="row">{b.label}</th>
              <td>{b.count}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

function Strip({ field, bars }: { field: string; bars: Bar[] }) {
  const total = bars.reduce((n, b) => n + b.count, 0);
  const title = `Records by ${field}`;
  return (
    <figure class="chart strip">
      <figcaption>{title}</figcaption>
      <div class="strip-bars" role="img" aria-label={`${title}: ${bars.map((b) => `${b.label} ${b.count}`).join(', ')}`}>
        {bars.map((b) => (
          <div key={b.label} class="strip-row">
            <span class="strip-label">{b.label}</span>
            <svg class="strip-bar" focusable="false">
              <rect class="bar" width={`${share(b.count, bars)}%`} height="100%" rx="2" />
            </svg>
            <span class="strip-count">{count(b.count)}</span>
          </div>
        ))}
      </div>
      <ValuesTable caption={`${title} (${total} in all)`} head={field} bars={bars} />
    </figure>
  );
}

/** Bars of the last DAYS days in a 300 × 100 box stretched to the width; labels are HTML (they do not stretch). */
function OverTime({ bars }: { bars: Bar[] }) {
  const total = bars.reduce((n, b) => n + b.count, 0);
  const max = Math.max(0, ...bars.map((b) => b.count));
  const busiest = bars.reduce((a, b) => (b.count > a.count ? b : a), bars[0]);
  const title = `Records created per day, last ${DAYS} days (UTC)`;
  const slot = 300 / bars.length;
  const said = total === 0 ? 'none' : `${total} in all, most on ${busiest.label} (${busiest.count})`;
  return (
    <figure class="chart over-time">
      <figcaption>{title}</figcaption>
      <div class="over-time-plot">
        <span class="axis-max" aria-hidden="true">{count(max)}</span>
        <svg viewBox="0 0 300 100" preserveAspectRatio="none" role="img" aria-label={`${title}: ${said}`} focusable="false">
          <line class="axis" x1="0" y1="100" x2="300" y2="100" />
          {bars.map((b, i) => {
            const h = share(b.count, bars);
            return (
              <rect key={b.label} class="bar" x={i * slot + slot * 0.15} y={100 - h} width={slot * 0.7} height={h}>
                <title>{`${b.label}: ${b.count}`}</title>
              </rect>
            );
          })}
        </svg>
      </div>
      <div class="axis-days" aria-hidden="true">
        <span>{bars[0].label}</span>
        <span>{bars[bars.length - 1].label}</span>
      </div>
      <ValuesTable caption={`${title}: ${total} in all`} head="Day" bars={bars} />
    </figure>
  );
}
