import type { AgentMessage } from '@colloquy/core'
import { useSession } from '@colloquy/vue'
import { replyEnd } from 'chat-kit'
import { defineComponent, type PropType } from 'vue'
import { replyEndMark } from './status.js'

/** The end of the chat's last reply, as its session tells it (the same in every tab). */
export const LastReplyEnd = defineComponent({
  props: {
    sessionId: { type: String, required: true },
    message: { type: Object as PropType<AgentMessage>, required: true },
  },
  setup(props) {
    const session = useSession(() => props.sessionId)
    return () =>
      replyEndMark(
        replyEnd(props.message, session.value.status === 'ready' ? session.value.data : null, true),
      )
  },
})
