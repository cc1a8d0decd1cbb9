import { Peer, PeerCreate, PeerUpdate, PeerUpdated } from "@tern/protocol";

export const PeerSchema = Peer.meta({ id: "Peer" });
export const PeerCreateSchema = PeerCreate.meta({ id: "PeerCreate" });
export const PeerUpdateSchema = PeerUpdate.meta({ id: "PeerUpdate" });
export const PeerUpdatedSchema = PeerUpdated.meta({ id: "PeerUpdated" });
