// Tool definitions written for the tool-search bench, topping up the tools/list answers of the MCP server
// packages (gathered when the bench runs) with domains none of them covers: calendar, mail, chat, payments,
// spreadsheets, Kubernetes, weather and maps. Each is a plain MCP tool definition.

const str = (description) => ({ type: 'string', description });
const int = (description) => ({ type: 'integer', description });
const bool = (description) => ({ type: 'boolean', description });
const list = (description) => ({ type: 'array', items: { type: 'string' }, description });

function tool(name, description, properties, required = Object.keys(properties).slice(0, 1)) {
  return { name, description, inputSchema: { type: 'object', properties, required, additionalProperties: false } };
}

export const WRITTEN_TOOLS = [
  // calendar
  tool(
    'calendar_create_event',
    'Schedule a new event or meeting in a calendar, with attendees, start and end time',
    {
      title: str('What the event is called'),
      start: str('Start time, RFC 3339'),
      end: str('End time, RFC 3339'),
      attendees: list('Email addresses of the people invited'),
      location: str('Room or video link'),
    },
    ['title', 'start', 'end'],
  ),
  tool(
    'calendar_list_events',
    'List the events of a calendar between two dates (an agenda)',
    { from: str('First day'), to: str('Last day'), calendar: str('Calendar id') },
    ['from'],
  ),
  tool('calendar_update_event', 'Move or change an existing calendar event: its time, title or attendees', {
    eventId: str('The event'),
    start: str('New start'),
    end: str('New end'),
    title: str('New title'),
  }),
  tool('calendar_delete_event', 'Cancel and remove a calendar event', { eventId: str('The event'), notify: bool('Tell the attendees') }),
  tool('calendar_find_free_slots', 'Find times when all the given people are free for a meeting of a given length', {
    attendees: list('Email addresses'),
    durationMinutes: int('Length of the meeting'),
    within: str('Date range to look in'),
  }),
  tool('calendar_respond_to_invitation', 'Accept, decline or tentatively accept a meeting invitation', {
    eventId: str('The invitation'),
    response: { type: 'string', enum: ['accept', 'decline', 'tentative'] },
  }),
  // mail
  tool(
    'mail_send_email',
    'Send an email message to one or more recipients, with a subject, body and attachments',
    {
      to: list('Recipients'),
      subject: str('Subject line'),
      body: str('Message text'),
      cc: list('Copied recipients'),
      attachments: list('Paths of files to attach'),
    },
    ['to', 'subject', 'body'],
  ),
  tool('mail_search_inbox', 'Search the mailbox for email messages by sender, subject, words or date', {
    query: str('Search terms, e.g. from:alice invoice'),
    limit: int('Most messages'),
  }),
  tool('mail_read_message', 'Read one email message: headers, body and the names of its attachments', { messageId: str('The message') }),
  tool(
    'mail_reply',
    'Reply to an email thread, to the sender or to everyone',
    { messageId: str('The message replied to'), body: str('Reply text'), replyAll: bool('Reply to all recipients') },
    ['messageId', 'body'],
  ),
  tool('mail_create_draft', 'Save an email as a draft without sending it', {
    to: list('Recipients'),
    subject: str('Subject'),
    body: str('Text'),
  }),
  tool('mail_add_label', 'Label, tag or file email messages into a folder', {
    messageIds: list('Messages'),
    label: str('Label or folder'),
  }),
  tool('mail_archive_messages', 'Archive email messages: move them out of the inbox', { messageIds: list('Messages') }),
  // chat
  tool(
    'chat_post_message',
    'Post a message to a chat channel or thread (team chat)',
    { channel: str('Channel name or id'), text: str('Message'), threadId: str('Reply in this thread') },
    ['channel', 'text'],
  ),
  tool('chat_send_direct_message', 'Send a private direct message to one person in the team chat', {
    user: str('User name or id'),
    text: str('Message'),
  }),
  tool('chat_list_channels', 'List the chat channels of the workspace, public and private', {
    includeArchived: bool('Also archived channels'),
  }),
  tool('chat_channel_history', 'Read the recent messages of a chat channel', { channel: str('Channel'), limit: int('Most messages') }),
  tool('chat_add_reaction', 'React to a chat message with an emoji', {
    channel: str('Channel'),
    messageId: str('Message'),
    emoji: str('Emoji name'),
  }),
  tool('chat_set_status', 'Set your chat status text and emoji (e.g. in a meeting, on holiday)', {
    text: str('Status text'),
    emoji: str('Emoji'),
    expiresAt: str('When it clears'),
  }),
  tool('chat_create_channel', 'Create a new chat channel and invite members', {
    name: str('Channel name'),
    private: bool('Invite only'),
    members: list('Members to invite'),
  }),
  // payments
  tool(
    'payments_create_invoice',
    'Create and send an invoice to a customer for an amount in a currency',
    {
      customerId: str('The customer'),
      amount: int('Amount in the smallest currency unit (cents)'),
      currency: str('ISO 4217 code'),
      dueDate: str('When it is due'),
    },
    ['customerId', 'amount', 'currency'],
  ),
  tool('payments_refund_charge', 'Refund a payment (charge), fully or in part', {
    chargeId: str('The charge'),
    amount: int('Amount to refund, cents; all when absent'),
    reason: str('Why'),
  }),
  tool(
    'payments_list_transactions',
    'List payment transactions, charges and payouts in a date range',
    { from: str('Start date'), to: str('End date'), status: str('succeeded, failed, pending') },
    ['from'],
  ),
  tool('payments_get_balance', 'Get the available and pending balance of the payments account', {}, []),
  tool('payments_create_customer', 'Create a customer record for billing, with name, email and address', {
    name: str('Name'),
    email: str('Email'),
    address: str('Billing address'),
  }),
  tool('payments_cancel_subscription', 'Cancel a customer subscription now or at the end of the billing period', {
    subscriptionId: str('The subscription'),
    atPeriodEnd: bool('Cancel when the period ends'),
  }),
  tool('payments_create_payment_link', 'Create a shareable checkout link that takes a payment for a product', {
    productId: str('The product'),
    quantity: int('How many'),
  }),
  // spreadsheets
  tool(
    'sheets_read_range',
    'Read the cell values of a range of a spreadsheet (e.g. Sheet1!A1:D20)',
    { spreadsheetId: str('The spreadsheet'), range: str('A1 notation') },
    ['spreadsheetId', 'range'],
  ),
  tool(
    'sheets_write_range',
    'Write values into the cells of a spreadsheet range',
    {
      spreadsheetId: str('The spreadsheet'),
      range: str('A1 notation'),
      values: { type: 'array', items: { type: 'array', items: {} }, description: 'Rows of cell values' },
    },
    ['spreadsheetId', 'range', 'values'],
  ),
  tool(
    'sheets_append_rows',
    'Append rows at the end of a table in a spreadsheet',
    { spreadsheetId: str('The spreadsheet'), sheet: str('Sheet name'), rows: { type: 'array', items: { type: 'array', items: {} } } },
    ['spreadsheetId', 'rows'],
  ),
  tool('sheets_create_spreadsheet', 'Create a new, empty spreadsheet document with named sheets', {
    title: str('Title'),
    sheets: list('Sheet names'),
  }),
  tool(
    'sheets_add_sheet',
    'Add a sheet (tab) to an existing spreadsheet',
    { spreadsheetId: str('The spreadsheet'), title: str('Tab name') },
    ['spreadsheetId', 'title'],
  ),
  tool(
    'sheets_format_cells',
    'Format spreadsheet cells: bold, colours, number format, borders',
    { spreadsheetId: str('The spreadsheet'), range: str('A1 notation'), format: { type: 'object', description: 'Format to apply' } },
    ['spreadsheetId', 'range'],
  ),
  tool(
    'sheets_create_chart',
    'Create a chart (bar, line, pie) from a range of spreadsheet data',
    { spreadsheetId: str('The spreadsheet'), range: str('Data range'), type: { type: 'string', enum: ['bar', 'line', 'pie'] } },
    ['spreadsheetId', 'range'],
  ),
  // kubernetes
  tool(
    'k8s_list_pods',
    'List the pods of a Kubernetes namespace with their status and restarts',
    { namespace: str('Namespace'), labelSelector: str('e.g. app=web') },
    [],
  ),
  tool('k8s_get_pod_logs', 'Get the container logs of a Kubernetes pod', {
    pod: str('Pod name'),
    namespace: str('Namespace'),
    container: str('Container'),
    tailLines: int('Last lines only'),
  }),
  tool(
    'k8s_scale_deployment',
    'Scale a Kubernetes deployment to a number of replicas',
    { deployment: str('Deployment'), namespace: str('Namespace'), replicas: int('Replicas') },
    ['deployment', 'replicas'],
  ),
  tool('k8s_rollout_restart', 'Restart a Kubernetes deployment with a rolling update (rollout restart)', {
    deployment: str('Deployment'),
    namespace: str('Namespace'),
  }),
  tool('k8s_apply_manifest', 'Apply a Kubernetes YAML manifest to the cluster (kubectl apply)', {
    manifest: str('YAML text'),
    namespace: str('Namespace'),
  }),
  tool(
    'k8s_delete_resource',
    'Delete a Kubernetes resource by kind and name',
    { kind: str('e.g. Deployment, Service'), name: str('Name'), namespace: str('Namespace') },
    ['kind', 'name'],
  ),
  tool(
    'k8s_describe_resource',
    'Describe a Kubernetes resource: its spec, status and recent events',
    { kind: str('Kind'), name: str('Name'), namespace: str('Namespace') },
    ['kind', 'name'],
  ),
  tool('k8s_list_nodes', 'List the nodes of the Kubernetes cluster with their capacity and conditions', {}, []),
  tool('k8s_port_forward', 'Forward a local port to a port of a Kubernetes pod or service', {
    target: str('pod/name or service/name'),
    localPort: int('Local port'),
    remotePort: int('Remote port'),
  }),
  // weather and maps
  tool('weather_current', 'Current weather conditions (temperature, wind, rain) at a place', {
    location: str('City or coordinates'),
    units: { type: 'string', enum: ['metric', 'imperial'] },
  }),
  tool('weather_forecast', 'Weather forecast for the coming days at a place', {
    location: str('City or coordinates'),
    days: int('Days ahead (1-10)'),
  }),
  tool('maps_geocode', 'Turn a street address into latitude and longitude coordinates', { address: str('Address') }),
  tool(
    'maps_reverse_geocode',
    'Turn latitude and longitude into the nearest street address',
    { latitude: { type: 'number' }, longitude: { type: 'number' } },
    ['latitude', 'longitude'],
  ),
  tool(
    'maps_directions',
    'Route and travel directions between two places by car, foot, bike or transit, with duration',
    {
      origin: str('From'),
      destination: str('To'),
      mode: { type: 'string', enum: ['driving', 'walking', 'bicycling', 'transit'] },
    },
    ['origin', 'destination'],
  ),
  tool('maps_search_places', 'Search for places nearby: restaurants, shops, hotels, by category and area', {
    query: str('What to look for'),
    near: str('Area'),
    radiusMeters: int('Radius'),
  }),
  tool(
    'maps_distance_matrix',
    'Travel distances and times between several origins and destinations',
    { origins: list('Origins'), destinations: list('Destinations') },
    ['origins', 'destinations'],
  ),
  // translation and documents
  tool(
    'translate_text',
    'Translate a text from one language into another',
    { text: str('Text'), to: str('Target language code'), from: str('Source language; detected when absent') },
    ['text', 'to'],
  ),
  tool('detect_language', 'Detect which language a text is written in', { text: str('Text') }),
  tool('pdf_extract_text', 'Extract the text of a PDF document, page by page', {
    url: str('URL or path of the PDF'),
    pages: str('Page range, e.g. 1-5'),
  }),
  tool('ocr_image', 'Recognise the printed or handwritten text in an image (OCR)', {
    url: str('Image URL or path'),
    language: str('Language hint'),
  }),
  tool('summarize_document', 'Summarise a long document into a few bullet points', {
    text: str('Document text'),
    maxBullets: int('Most bullets'),
  }),
];
