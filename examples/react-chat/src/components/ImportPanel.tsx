import type { ImportWarning } from '@colloquy/formats'
import type { ReactNode } from 'react'
import type { ImportJob } from '../data/import-transcripts.js'
import { Icon } from './Icon.js'

const size = (n: number): string =>
  n >= 1 << 20 ? `${(n / 2 ** 20).toFixed(1)} MB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} B`
const plural = (n: number, one: string, many = `${one}s`): string =>
  `${n.toLocaleString()} ${n === 1 ? one : many}`

function progressText(job: ImportJob): string {
  if (job.state === 'waiting') return 'Waiting…'
  if (job.state === 'read')
    return `Reading ${size(job.done)}${job.total !== undefined ? ` of ${size(job.total)}` : ''}`
  return `Writing ${job.done.toLocaleString()}${job.total !== undefined ? ` of ${plural(job.total, 'entry', 'entries')}` : ' entries'}`
}

/** What the importer could not map as-is: a count, the list one click away. */
function Warnings({ warnings }: { warnings: ImportWarning[] }): ReactNode {
  if (warnings.length === 0) return <span className="import-warnings-none">no warnings</span>
  return (
    <details className="import-warnings">
      <summary>{plural(warnings.length, 'warning')}</summary>
      <ul>
        {warnings.map((w, i) => (
          <li key={i}>
            <code>{w.code}</code> {w.message}
            {w.line !== undefined ? ` (line ${w.line})` : ''}
          </li>
        ))}
      </ul>
    </details>
  )
}

function JobCard({
  job,
  onDismiss,
  onOpen,
}: {
  job: ImportJob
  onDismiss(): void
  onOpen(id: string): void
}): ReactNode {
  const finished = job.state === 'done' || job.state === 'error'
  const [main, ...others] = job.sessions
  return (
    <li className={`import-job import-${job.state}`} data-state={job.state} aria-busy={!finished}>
      <div className="import-head">
        <Icon name="file" size={15} />
        <span className="import-name" title={job.name}>
          {job.name}
        </span>
        {finished && (
          <button
            type="button"
            className="icon-button"
            aria-label={`Dismiss ${job.name}`}
            onClick={onDismiss}
          >
            <Icon name="x" size={14} />
          </button>
        )}
      </div>
      {!finished && (
        <>
          <progress
            aria-label={`Importing ${job.name}`}
            data-phase={job.state}
            max={job.state === 'waiting' || !job.total ? undefined : job.total}
            value={job.state === 'waiting' || !job.total ? undefined : job.done}
          />
          <span className="import-status">{progressText(job)}</span>
        </>
      )}
      {job.state === 'done' && main && (
        <div className="import-result" role="status">
          <span>
            Imported{' '}
            <button type="button" className="link" onClick={() => onOpen(main.session_id)}>
              {main.title}
            </button>
          </span>
          <span className="import-facts">
            <span>{plural(main.entries, 'entry', 'entries')}</span>
            {others.length > 0 && <span>+{plural(others.length, 'more session')}</span>}
            <Warnings warnings={job.warnings} />
          </span>
        </div>
      )}
      {job.state === 'error' && (
        <p className="import-error-text" role="alert">
          {job.error}
        </p>
      )}
    </li>
  )
}

/** One card per imported file: its progress, then what it became (or why it did not). */
export function ImportPanel({
  jobs,
  onDismiss,
  onOpen,
}: {
  jobs: ImportJob[]
  onDismiss(id: number): void
  onOpen(id: string): void
}): ReactNode {
  if (jobs.length === 0) return null
  return (
    <section className="imports" aria-label="Imports">
      <ul>
        {jobs.map((job) => (
          <JobCard key={job.id} job={job} onDismiss={() => onDismiss(job.id)} onOpen={onOpen} />
        ))}
      </ul>
    </section>
  )
}
