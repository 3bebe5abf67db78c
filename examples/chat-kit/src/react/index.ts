// The React pieces the three React apps share (the Vue app renders the same rules with h()).
export { EndpointForm } from './endpoint-form.js'
export { ExportMenu } from './export-menu.js'
export { ForkBadge, ReplyEndMark } from './reply-end.js'
export { useFollowNewest } from './follow.js'
export { Paperclip } from './paperclip.js'
