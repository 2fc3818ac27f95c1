/** Where an upload is served: a path of this API, built from the record's id only. */
export function fileUrl(id: string): string {
  return `/api/v1/files/${id}`;
}
